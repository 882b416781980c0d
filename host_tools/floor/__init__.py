"""The casino floor: every shoe's events through MQTT into PostgreSQL, verified again, shown live.

    simshoe.py    lightweight simulated shoes (the firmware's own link code, real signed chains)
    mqtt.py       broker URLs (credentials/TLS are configuration), paho clients, embedded amqtt
    aedes.py      the embedded default broker: aedes on the pinned Node (broker_js/), users + ACL
    brokers.py    local brokers by name: embedded() (aedes, or amqtt), Mosquitto, bridged edges
    pg.py         embedded PostgreSQL (pgserver), versioned migrations (migrations/*.sql), roles
    gateway.py    at the table: ShoeLink -> local audit store -> MQTT (QoS 1, from the store)
    collector.py  MQTT -> verify MAC and chain again -> PostgreSQL, re-evaluate, alerts, leases
    view.py       the floor page (HTTP(S) + server-sent events), drill-down, alerts; reader role;
                  every route behind a login and a role allowlist
    auth.py       the view's users (argon2id, a 0600 file), sessions, failed-login throttle
    brokerauth.py MQTT users per gateway/collector, the topic ACL, Mosquitto's files; amqtt plugins
                  (aedes applies the same files: broker_js/floorauth.mjs)
    keyring.py    which key belongs to which shoe (provisioning files), never sent anywhere

Topics (prefix "floor" by default): floor/shoe/<id>/events (QoS 1, the shoe's signed payload
unchanged), floor/shoe/<id>/state (retained JSON: live table state from the gateway),
floor/shoe/<id>/replay (a collector asks the gateway to publish again from an eseq).
"""
