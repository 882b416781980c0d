"""The clause matrix (host_tools/cert): every rule clause of the registry has a code location
and a test, no tag or marker names an unknown clause, and the checker really finds each kind of
gap (on small trees made for the purpose)."""

import json
import textwrap

import pytest

from host_tools import cli
from host_tools.cert import collect, matrix, mutate, registry
from host_tools.runtime import ROOT


def test_every_rule_clause_has_code_and_a_test():
    m = matrix.build(ROOT)
    assert m["problems"] == [], "\n".join(m["problems"])
    ids = [r["id"] for r in m["clauses"]]
    # the three regulation sections held, and every section of rules.md, are in the registry
    for prefix in (
        "684a.7(",
        "684a.11(",
        "678a.7(",
        "rules:1.1",
        "rules:1.2",
        "rules:1.3",
        "rules:1.4",
        "rules:1.5",
        "rules:1.6",
        "rules:2.1",
        "rules:2.2",
        "rules:3",
        "rules:4",
        "irr:",
    ):
        assert any(i.startswith(prefix) for i in ids), prefix
    for r in m["clauses"]:
        if r["scope"] == "shoe":
            assert all(
                c["path"].startswith(("firmware/", "board/", "host_tools/")) for c in r["code"]
            ), r["id"]
            assert all(t["path"].startswith("tests/") for t in r["tests"]), r["id"]


def test_every_irregularity_code_of_the_firmware_has_a_clause():
    """Each reason of shoe.reasons.IRREGULARITIES is a clause (rules.md 3 or
    docs/irregularities.md), so a new irregularity cannot enter without a row in the matrix."""
    from shoe import reasons

    codes = [x.split(":")[0] for x in reasons.IRREGULARITIES.split()]
    ids = {c.id for c in registry.CLAUSES}
    named = {
        "misdeal_too_many": "rules:3-misdeal-too-many",
        "misdeal_too_few": "rules:3-misdeal-too-few",
        "misdeal_unreadable": "rules:3-unreadable",
        "card_foreign": "rules:3-card-foreign",
        "card_forged": "rules:3-card-forged",
        "card_other_back": "rules:3-card-other-back",
        "card_duplicate": "rules:3-duplicate",
        "cover_card": "rules:3-cover-card",
        "stub_misdealt": "rules:3-stub-misdealt",
        "stub_deck_wrong": "rules:3-stub-deck-wrong",
        "deck_unshuffled": "rules:3-unshuffled",
        "deck_expired": "rules:3-deck-expired",
        "reader_jam": "rules:3-jam",
        "card_out_of_round": "irr:card-out-of-round",
        "void_supervisor": "irr:void-supervisor",
        "power_loss": "irr:power-loss",
        "settle_error": "irr:settle-error",
        "journal_corrupt": "irr:journal-corrupt",
    }
    assert sorted(codes) == sorted(named), "a new irregularity: give it a clause"
    assert all(named[c] in ids for c in codes)


def tree(tmp_path, files):
    for path, text in files.items():
        f = tmp_path / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(textwrap.dedent(text))
    return tmp_path


GOOD = "684a.7(c)"


def test_tags_are_comments_and_name_their_function(tmp_path):
    root = tree(
        tmp_path,
        {
            "firmware/shoe/x.py": '''
        """Docstring mentioning # clause: 684a.7(d)(1) is no tag."""
        LIMIT = 6  # clause: rules:1.1-seats


        # clause: 684a.7(c)
        def above():
            s = "# clause: 684a.7(d)(2)"   # a string is no tag either
            return s


        class T:
            def inner(self):
                x = 1
                # clause: 684a.11(b), rules:1.5-refused
                return x
        '''
        },
    )
    tags, problems = collect.code_tags(root)
    assert problems == []
    got = {cid: [(loc.line, loc.function) for loc in locs] for cid, locs in tags.items()}
    assert got == {
        "rules:1.1-seats": [(3, "<module>")],
        "684a.7(c)": [(6, "above")],
        "684a.11(b)": [(15, "T.inner")],
        "rules:1.5-refused": [(15, "T.inner")],
    }


def test_the_checker_finds_every_kind_of_gap(tmp_path):
    root = tree(
        tmp_path,
        {
            "firmware/shoe/x.py": """
            # clause: 684a.7(c), no-such-clause
            def f():
                pass
            # clause:
            """,
            "tests/test_x.py": """
            import pytest

            IDS = ("684a.7(c)",)
            pytestmark = pytest.mark.clause("rules:1.1-seats")


            @pytest.mark.clause("684a.7(c)", "684a.7(a)")
            def test_good():
                pass


            @pytest.mark.clause("unknown-one")
            def test_unknown():
                pass


            @pytest.mark.clause(*IDS)
            def test_computed():
                pass


            class TestGroup:
                @pytest.mark.clause("rules:1.2-ace")
                def test_in_class(self):
                    def helper():
                        pass
                    pytest.mark.clause("rules:1.2-categories")(helper)
            """,
        },
    )
    m = matrix.build(root)
    probs = "\n".join(m["problems"])
    assert "code tag names unknown clause 'no-such-clause'" in probs
    assert "a clause tag without an identifier" in probs
    assert "test test_unknown names unknown clause 'unknown-one'" in probs
    assert "clause identifiers must be string literals" in probs
    assert "must decorate a test function or class" in probs
    assert "clause 684a.7(a) is marked outside the shoe but has code or tests" in probs
    rows = {r["id"]: r for r in m["clauses"]}
    assert [t["nodeid"] for t in rows["684a.7(c)"]["tests"]] == ["tests/test_x.py::test_good"]
    assert [c["function"] for c in rows["684a.7(c)"]["code"]] == ["f"]
    assert [t["nodeid"] for t in rows["rules:1.1-seats"]["tests"]] == ["tests/test_x.py"]
    assert [t["nodeid"] for t in rows["rules:1.2-ace"]["tests"]] == [
        "tests/test_x.py::TestGroup::test_in_class"
    ]
    # every other clause of the shoe is reported as lacking code and a test
    assert "clause 684a.11(b)(1) has no code location" in probs
    assert "clause 684a.11(b)(1) has no test" in probs
    assert "clause 684a.7(c) has no" not in probs
    assert "clause 684a.7(e)" not in probs  # outside the shoe: needs neither


def test_the_registry_is_checked(monkeypatch):
    assert registry.check_registry() == []
    bad = registry.CLAUSES + [
        registry.Clause("684a.7(c)", registry.FCF, "x", "y"),
        registry.Clause("a b", registry.FCF, "x", "y"),
        registry.Clause("z", "poker", "x", "y"),
        registry.Clause("w", registry.FCF, "x", "y", scope="outside"),
    ]
    monkeypatch.setattr(registry, "CLAUSES", bad)
    probs = registry.check_registry()
    assert "clause 684a.7(c) is listed twice" in probs
    assert "clause id 'a b': no spaces, commas or quotes" in probs
    assert "clause z: text, source and game are required" in probs
    assert "clause w is outside the shoe but does not say why" in probs


def test_the_renderings_carry_every_clause_and_escape_text():
    m = matrix.build(ROOT)
    md, page, js = (matrix.render(m, f) for f in ("md", "html", "json"))
    back = json.loads(js)
    assert [r["id"] for r in back["clauses"]] == [c.id for c in registry.CLAUSES]
    for c in registry.CLAUSES:
        assert "### %s" % c.id in md and ">%s</b>" % c.id in page
    assert "<script" not in page and "Ante and Odds in equal amounts" in page
    m["clauses"][0]["text"] = "<script>alert(1)</script>"
    assert "<script>" not in matrix.render(m, "html")
    with pytest.raises(ValueError):
        matrix.render(m, "pdf")


def test_shoectl_certify_check_and_matrix(tmp_path, capsys):
    assert cli.main(["certify", "check"]) == 0
    assert "0 problem" not in capsys.readouterr().err
    assert cli.main(["certify", "matrix", "--out", str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.iterdir()} == {
        "clause-matrix.md",
        "clause-matrix.html",
        "clause-matrix.json",
    }


def test_every_mutation_of_the_smoke_test_still_applies():
    assert mutate.check_snippets(ROOT) == []
    ids = {c.id for c in registry.CLAUSES}
    assert all(cid in ids for _, cid, _, _ in mutate.MUTATIONS)
