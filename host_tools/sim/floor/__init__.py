"""Stand-ins for a casino floor, for the tests, `shoectl floor --demo` and bench/ (not product).

simshoe.py      lightweight simulated shoes (the firmware's own link code, real signed chains)
harness.py      a whole floor in one process: shoes, gateways, collectors, the view
procfloor.py    a floor spread over processes, tables in groups (bench_floor_procs)
brokers.py      local MQTT brokers by name: embedded() (aedes, or amqtt), Mosquitto, bridges
aedes.py        the embedded default broker: aedes on the pinned Node (broker_js/), users + ACL
amqttbroker.py  the embedded amqtt broker (`--broker-engine amqtt`)
mosquitto.py    an installed Mosquitto run for tests and the bench
localbroker.py  what those brokers share (a port on 127.0.0.1, restart, `with`)
embedded_pg.py  PostgreSQL 16 from the pgserver wheel
"""
