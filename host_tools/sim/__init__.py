"""The stand-ins: everything that plays the world around a real shoe and a real floor, for the
tests, the demo and bench/. Nothing here ships to a casino as product; the product (link, audit,
deploy, diagnostics, floor's gateway/collector/view) never imports from here, except the commands
that start a stand-in (`shoectl demo`, `session`, `emu`, `floor --demo`, `floor-broker`).

    simboard.py      the virtual board: the firmware under the MicroPython unix port
    world.py         the dealer, the cards and the reader (optical lines, RFID tags)
    ntag424.py       a simulated NTAG 424 DNA tag (the RFID reader model's card)
    faultproxy.py    a hostile cable: drops, corrupts, duplicates, pulls
    session.py       the scripted table system that plays a session script against a board
    power_returns.py its re-sending of a command across a power cut
    virtual_table.py board + world + runner (what `shoectl session` and `shoectl demo` start)
    remote.py        the same runner against a board that runs elsewhere (virtual, emulated, real)
    provision_sim.py the demo keys of a virtual board (never for a casino floor)
    demo.py          the demo's players and scripts
    memstore.py      MemoryStore: the shoe-side store in memory (CPython and MicroPython tests)
    emu/             the emulated Raspberry Pi Pico (rp2040js rig, its UART/SPI/flash models)
    floor/           a floor's stand-ins: simulated shoes and floors, embedded MQTT brokers and
                     PostgreSQL, a Mosquitto runner
"""
