"""The casino floor: every shoe's events through MQTT into PostgreSQL, verified again, shown live.

    simshoe.py    lightweight simulated shoes (the firmware's own link code, real signed chains)
    mqtt.py       broker URLs (credentials/TLS are configuration), paho clients, embedded amqtt
    pg.py         embedded PostgreSQL (pgserver), versioned migrations (migrations/*.sql), roles
    gateway.py    at the table: ShoeLink -> local audit store -> MQTT (QoS 1, from the store)
    collector.py  MQTT -> verify MAC and chain again -> PostgreSQL, re-evaluate, alerts, leases
    view.py       the floor page (HTTP + server-sent events), drill-down, alerts; reader role
    keyring.py    which key belongs to which shoe (provisioning files), never sent anywhere

Topics (prefix "floor" by default): floor/shoe/<id>/events (QoS 1, the shoe's signed payload
unchanged), floor/shoe/<id>/state (retained JSON: live table state from the gateway),
floor/shoe/<id>/replay (a collector asks the gateway to publish again from an eseq).
"""
