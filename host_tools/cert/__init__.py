"""Certification support: the rule clauses the shoe enforces and where each is implemented and
proved (the clause matrix), the reproducible firmware build and its hashes (what a lab tests
is what runs), a mutation smoke test, and the submission pack. `shoectl certify` drives it;
docs/certification.md explains it.

    registry.CLAUSES            every clause: id, game, source, text, scope
    collect.scan(root)          the `# clause:` tags in the code and the clause markers of
                                the tests, read from the sources (nothing is imported)
    matrix.build(root)          clause -> text, source, code locations, tests; problems
    firmware.report(root)       the .mpy set's SHA-256s, its attestation manifest per board
    pack.build(root, out)       the submission pack: all of the above, the par sheets, the
                                documents, the test report, an index and a MANIFEST
                                (packindex, packdoc: its pages)
"""
