"""The casino floor: every shoe's events through MQTT into PostgreSQL, verified again, shown live.

    mqtt.py       broker URLs (credentials/TLS are configuration), paho clients, topics
    pg.py         PostgreSQL: versioned migrations (migrations/*.sql), roles, connections
    gateway.py    at the table: ShoeLink -> local audit store -> MQTT (QoS 1, from the store)
    collector.py  MQTT -> verify MAC and chain again -> PostgreSQL, re-evaluate, alerts, leases:
                  the loop; checks.py what it checks of each message, leases.py which shoes
                  it holds, collector_sql.py every statement it runs
    errlog.py     every daemon's errors: logged (one logger each), counted, the last ones kept
    view.py       the floor page (HTTP(S) + server-sent events), drill-down, alerts; reader role;
                  every route behind a login and a role allowlist
    auth.py       the view's users (argon2id, a 0600 file), sessions, failed-login throttle
    brokerauth.py MQTT users per gateway/collector, the topic ACL, Mosquitto's files; amqtt plugins
                  (the embedded aedes applies the same files: sim/floor/broker_js/floorauth.mjs)
    keyring.py    which key belongs to which shoe (provisioning files), never sent anywhere
    tableapi.py   the gateway's local API: the table system's commands in, replies and events
                  out, behind its own credential (link/viagateway.py is the client side)
    metrics.py    /healthz and Prometheus /metrics; forward.py alerts to syslog or a webhook
    prune.py, retention.py   the gateway's store pruned once the floor holds an event; the
                  database's day partitions detached and archived
    runner.py     a floor service in the foreground until Ctrl-C or SIGTERM

The stand-ins (simulated shoes and floors, embedded brokers and PostgreSQL, the Mosquitto runner)
live in host_tools/sim/floor/.

Topics (prefix "floor" by default): floor/shoe/<id>/events (QoS 1, the shoe's signed payload
unchanged, in an envelope with the gateway's signed receive time: keyring.wrap_event),
floor/shoe/<id>/state (retained JSON: live table state from the gateway, signed by it under the
shoe key; an unknown shoe id is quarantined by the collector, never a tile),
floor/shoe/<id>/replay (a collector asks the gateway to publish again from an eseq).
"""
