"""Random and hostile input to the table: only CommandError comes out, state stays JSON-able and
restorable, and every opened round ends in at most one result or void."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoe.table import CommandError, Table
from tests.firmware.table import fake_engine
from tests.firmware.table.helpers import FCF, SER

junk = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 70)
    | st.text(max_size=4)
    | st.sampled_from(["R", "B", "3A7F", "1", "6", "ante", "odds", "all_six"]),
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "seats",
                    "1",
                    "2",
                    "wagers",
                    "ante",
                    "odds",
                    "id",
                    "all",
                    "serial",
                    "back",
                    "game",
                    "procedure",
                    "detail",
                    "x",
                ]
            ),
            c,
            max_size=4,
        )
    ),
    max_leaves=12,
)
good_seats = st.fixed_dictionaries(
    {
        "seats": st.dictionaries(
            st.sampled_from(["1", "2", "3", "4", "5", "6"]),
            st.fixed_dictionaries(
                {
                    "wagers": st.sampled_from(
                        [{"ante": 5, "odds": 5}, {"ante": 5, "odds": 5, "all_six": 1}]
                    )
                }
            ),
            min_size=1,
            max_size=6,
        )
    }
)
kinds = st.sampled_from(
    [
        "configure",
        "load_deck",
        "open_round",
        "decisions",
        "ack",
        "status",
        "close_round",
        "void_round",
        "nonsense",
    ]
)
action = st.one_of(
    st.tuples(st.just("cmd"), kinds, junk),
    st.tuples(st.just("cmd"), st.just("open_round"), good_seats),
    st.tuples(
        st.just("cmd"),
        st.just("decisions"),
        st.dictionaries(st.sampled_from(["1", "2", "3"]), st.sampled_from([0, 5, 7])),
    ),
    st.tuples(st.just("cmd"), st.just("ack"), st.just({"all": True})),
    st.tuples(
        st.just("card"),
        st.sampled_from([SER, SER, SER, 0x1111]),
        st.sampled_from(["R", "R", "B"]),
        st.integers(0, 52),
    ),
    st.tuples(st.just("badcard"), junk, junk, junk),
    st.tuples(st.just("reject"), st.sampled_from(["no_read", "code_mac", "code_format", 5])),
    st.tuples(st.just("tick"), st.integers(0, 200)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(action, max_size=80))
def test_hostile_sequences(actions):
    t = Table(engine=fake_engine)
    t.command(
        "configure",
        {"game": FCF, "procedure": "manual-shoe", "jam_timeout_s": 50},
        0,
        "supervisor",
    )
    t.command("load_deck", {"serial": SER, "back": "R"}, 0)
    for c in range(53):
        t.card(SER, "R", c, 0)
    now = 1
    opened = outcomes = 0
    for a in actions:
        now += 1
        before = json.dumps(t.state(), sort_keys=True)
        try:
            if a[0] == "cmd":
                t.command(a[1], a[2], now)
            elif a[0] == "card":
                t.card(a[1], a[2], a[3], now)
            elif a[0] == "badcard":
                t.card(a[1], a[2], a[3], now)
            elif a[0] == "reject":
                t.reject(a[1], now)
            else:
                now += a[1]
                t.tick(now)
        except CommandError as e:
            assert isinstance(e.reason, str) and e.reason
            assert json.dumps(t.state(), sort_keys=True) == before
        ev = t.pop_events()
        opened += sum(1 for k, _ in ev if k == "round_open")
        outcomes += sum(1 for k, _ in ev if k in ("round_result", "round_void"))
        assert outcomes <= opened <= outcomes + 1
        snap = json.loads(json.dumps(t.state()))
        assert json.dumps(
            Table.from_state(snap, fake_engine).state(), sort_keys=True
        ) == json.dumps(snap, sort_keys=True)
    assert opened - outcomes == (1 if t.rnd is not None else 0)
