"""What attestation must never claim (docs/certification.md "What the attestation does not
cover"): a shoe running the frozen image has no firmware root and answers the manifest of no
files; checked against a mistyped or empty local tree (whose manifest is also that of no files)
it must not come out VERIFIED. The shoe's side is shoe.attest itself (pure: it runs here)."""
import os

from host_tools.link import verify_attestation
from shoe import attest

KEY = bytes(range(32))


def test_a_shoe_attesting_no_files_never_verifies(tmp_path):
    nonce = os.urandom(16)
    frozen = attest.attest(KEY, nonce, [])          # commands.roots(hw) with no firmware_root
    assert frozen["files"] == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    for roots in ([str(tmp_path / "v-typo")], [str(empty)], []):
        ok, local = verify_attestation(frozen, KEY, nonce, roots)
        assert local == frozen["manifest"]            # the same manifest of nothing ...
        assert not ok, roots                          # ... proves nothing


def test_a_deployed_tree_still_verifies_and_a_changed_file_does_not(tmp_path):
    tree = tmp_path / "v-1234abcd"
    (tree / "shoe").mkdir(parents=True)
    (tree / "shoe" / "a.mpy").write_bytes(b"M\x06code")
    (tree / "DEPLOYED").write_bytes(b"{}")
    nonce = os.urandom(16)
    ans = attest.attest(KEY, nonce, [str(tree)])
    assert verify_attestation(ans, KEY, nonce, [str(tree)])[0]
    (tree / "shoe" / "a.mpy").write_bytes(b"M\x06c0de")
    assert not verify_attestation(ans, KEY, nonce, [str(tree)])[0]
