'use strict';
/*
 * The emulated Raspberry Pi Pico of the shoe: rp2040js 1.4.1 + boot ROM + MicroPython UF2.
 *
 *   node rig.js --state DIR --uf2 FILE --bootrom FILE [--host 127.0.0.1] [--idle rate] [--rate R]
 *
 *   loopback TCP  repl    <-> USB CDC (the MicroPython REPL: mpremote, shoectl deploy/provision)
 *                 uart0   <-> UART0 GP0/GP1 (host link, ShoeLink)
 *                 uart1   <-> UART1 GP4/GP5 (optical reader module)
 *                 control <-> JSON lines: clock, pins (beam GP14, lid GP15, service GP22, LED
 *                            GP25), MFRC522 tag field, flash statistics, power cut, reset,
 *                            uf2 (a UF2 file copied onto the BOOTSEL drive: programmed, reset),
 *                            watchdog (where the chip was each time its watchdog ran out)
 *   DIR/flash.bin  the 2 MB QSPI flash, written through on every program/erase (flash.js)
 *   DIR/ntag.json  the read counters of the NTAG 424 DNA tags put in the field (they are the
 *                  tags' own: a power cut of the shoe keeps them)
 *
 * It prints one JSON line {"repl": port, "uart0": ..., "uart1": ..., "control": ...} when
 * listening. Gaps of stock rp2040js closed here (see ../shared/pico/README.md): flash
 * program/erase (flash.js), USB CDC answering every read with an empty packet (a read is
 * answered only when host bytes wait), UART transmit (stock: every byte sent the instant it is
 * written, TXFE always set; here paced at the programmed baud rate, the 32-byte FIFO reported
 * full (TXFF) and busy, the TX interrupt raised as it falls to its trigger level), and reset (the watchdog, machine.reset() and the control
 * channel recreate the chip on the same flash). UART receive is paced at the programmed baud
 * rate in emulated time, and a byte due while the 32-byte receive FIFO is full is lost (an
 * overrun, counted: control `stats` rx_overrun), as during a flash program or erase, which
 * run with interrupts off (--uart-rx hold: such a byte waits instead, the older model). The
 * receive interrupt comes as on the PL011: at the FIFO's trigger level (4 bytes as pico-sdk sets
 * it) or when a byte has waited 32 bit periods with none after it (--uart-rx-irq byte: on every
 * byte, as stock rp2040js has it). Emulated time never runs ahead of wall time (idle WFI waits are held
 * to the wall clock, so host timeouts mean the same on both sides); busy code runs slower than
 * real time, so chip figures are read from the emulated clock, not from the host's.
 */
const HOST_GAP_NS = 500e6; // see uartMarks
/** One 10-bit character's time on UART u's wire (ns), at its programmed rate (115200 until set). */
const byteNs = (u) => 10e9 / (u.baudDivider ? u.baudRate : 115200);
const fs = require('fs');
const net = require('net');
const path = require('path');
const {RP2040, USBCDC} = require('rp2040js');
// not in the package's exports map; the same module instance the package itself loads
const {SimulationClock} = require(path.join(path.dirname(require.resolve('rp2040js')), 'clock/simulation-clock.js'));
const {W25Q, installFlash, loadImage, programUF2} = require('./flash.js');
const {MFRC522} = require('./mfrc522.js');
// the core's dispatch and SRAM stores made faster, same behaviour (fastcore.js);
// SHOE_EMU_CORE=library keeps rp2040js as it is
if (process.env.SHOE_EMU_CORE !== 'library') require('./fastcore.js').install();

function args() {
  const a = {host: '127.0.0.1', ports: {}};
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; i += 2) {
    const k = v[i].replace(/^--/, '');
    if (['repl', 'uart0', 'uart1', 'control'].includes(k)) a.ports[k] = +v[i + 1];
    else a[k] = v[i + 1];
  }
  for (const k of ['state', 'uf2', 'bootrom']) {
    if (!a[k]) { console.error(`rig: --${k} is required`); process.exit(2); }
  }
  return a;
}

const CYCLE_NS = 8; // 125 MHz
// MicroPython's mp_hal_delay_us (v1.27.0, rp2): after the start time it spins on
// `while (time_us_64() < end)`, end in r4 (low) and r5 (high). The RFID driver's waits for the
// air (time.sleep_us) are such spins: up to a third of an idle RFID shoe's instructions. The rig
// moves the clock straight to `end` (or to the next UART input or alarm due before it) when the
// core reaches the loop: the same emulated time, busy as before, without running the loop's
// instructions. The loop is looked for in the image at every boot (findWaitLoop: its code, the
// same in the stock build and ours, wherever the linker put it); none found or more than one:
// off. SHOE_EMU_FASTWAIT=0: off.
const WAIT_CODE = [0x428d, 0xd8fb, 0xd101, 0x4284, 0xd8f8]; // after its `bl time_us_64`
const FASTWAIT = process.env.SHOE_EMU_FASTWAIT !== '0';

function blTarget(f, addr) {
  // the target of the Thumb BL at addr (flash f from 0x10000000), or null if it is none
  const o = addr - 0x10000000, h1 = f[o] | (f[o + 1] << 8), h2 = f[o + 2] | (f[o + 3] << 8);
  if ((h1 & 0xf800) !== 0xf000 || (h2 & 0xd000) !== 0xd000) return null;
  const s = (h1 >> 10) & 1, i1 = ~(((h2 >> 13) & 1) ^ s) & 1, i2 = ~(((h2 >> 11) & 1) ^ s) & 1;
  let off = (s << 24) | (i1 << 23) | (i2 << 22) | ((h1 & 0x3ff) << 12) | ((h2 & 0x7ff) << 1);
  if (s) off -= 1 << 25;
  return addr + 4 + off;
}

function findWaitLoop(f) {
  // the XIP address of the loop's `bl time_us_64` (then `cmp r5, r1; bhi loop; bne out; cmp r4,
  // r0; bhi loop`) whose callee a `bl` in the 40 bytes before it calls too (the start time); -1
  // unless exactly one place in the flash is such a loop
  let found = -1;
  for (let o = 40; o + 14 <= f.length; o += 2) {
    if (f[o + 4] !== 0x8d || f[o + 5] !== 0x42) continue; // cmp r5, r1
    if (!WAIT_CODE.every((h, i) => f[o + 4 + 2 * i] + (f[o + 5 + 2 * i] << 8) === h)) continue;
    const at = 0x10000000 + o, t = blTarget(f, at);
    if (t === null) continue;
    let start = false;
    for (let b = at - 40; b < at && !start; b += 2) start = blTarget(f, b) === t;
    if (!start) continue;
    if (found !== -1) return -1;
    found = at;
  }
  return found;
}
const PIN_DEFAULTS = {14: 1, 15: 0, 22: 1}; // beam clear (pull-up), lid closed, no service jumper

class Rig {
  constructor(opt) {
    this.opt = opt;
    fs.mkdirSync(opt.state, {recursive: true});
    const file = path.join(opt.state, 'flash.bin');
    this.mem = loadImage(file, opt.uf2);
    this.fd = fs.openSync(file, 'r+');
    const br = fs.readFileSync(opt.bootrom);
    if (br.length !== 16384) throw new Error('boot ROM must be 16384 bytes: ' + opt.bootrom);
    this.bootrom = new Uint32Array(br.buffer, br.byteOffset, 4096);
    // a unique id per state directory, kept with the flash like the chip's own
    const idFile = path.join(opt.state, 'unique_id');
    if (!fs.existsSync(idFile)) fs.writeFileSync(idFile, require('crypto').randomBytes(8).toString('hex'));
    this.uid = Array.from(Buffer.from(fs.readFileSync(idFile, 'utf8').trim(), 'hex'));
    this.pins = Object.assign({}, PIN_DEFAULTS);
    this.baseNs = 0; // emulated ns of earlier chip instances (before resets)
    this.resets = 0;
    this.wall0 = process.hrtime.bigint();
    // --idle rate: idle emulated time runs at the wall clock's rate, never catching up on the
    // lag busy code built (busy code runs slower than real time). By default (--idle catch-up)
    // an idle chip races ahead until it is level with the wall clock again, so a host that took
    // 1 s of wall time to answer may have been silent for many emulated seconds.
    this.idleRate = opt.idle === 'rate';
    this.wallSkew = 0; // ns of lag given up (--idle rate)
    // --rate R (0 < R <= 1): the chip runs at most R times real time, busy or idle: a machine
    // R times as fast as this one's spare CPU, for reproducing what a loaded CI machine does to
    // the wall-clock timers of the hosts talking to the chip (SHOE_EMU_RATE)
    this.rate = Math.min(1, Math.max(1e-3, +(opt.rate || 1)));
    this.watch = null; // profile: entry addresses whose callers are counted
    this.callers = null;
    this.frames = null; // profile: heap-allocated VM frames by function object
    this.bytesAt = null; // profile: allocator entries whose requested bytes are summed by caller
    this.bytesBy = null;
    this.clients = {};
    this.uartIn = [[], []];
    this.uartNext = [0, 0];
    // A host writing the reader's UART1 (`shoectl world`: a card line every --pace seconds)
    // paces it in wall time. The chip's clock lags the wall clock while it is busy, so lines
    // written 250 ms apart could reach it 30 ms apart in its own time on a loaded machine,
    // back to back at the baud rate: a dealer ten times too fast, whose lines the FIFO lost
    // during a flash erase. A host burst on UART1 therefore starts no sooner, in emulated
    // time, than the previous one's start plus the wall time between them, up to HOST_GAP_NS
    // (a dealer's slowest deliberate pace; a longer wall gap is the host waiting on the chip,
    // and living it through in the chip's time made a session runner's rounds several times
    // slower on a loaded machine). uartMarks: [byte index, emulated ns] of bursts queued
    // behind others.
    this.uartMarks = [[], []];
    this.uartPushed = [0, 0];
    this.uartTaken = [0, 0];
    this.hostWall = [null, null];
    this.hostAt = [0, 0];
    this.uartTxNs = [0, 0];
    this.uartTxBytes = [0, 0];
    this.txStarts = [[], []]; // emulated ns of each frame's start on UART0/1 (pumpTx)
    // [start ns, bytes, end ns] of each link frame on UART0/1: from its first byte after a 0x00
    // to the 0x00 that ends it (counted), however long the wire paused inside it
    this.txFrames = [[], []];
    this.rxEnds = [[], []];   // emulated ns at which each received burst's last byte arrived
    // --uart-rx overrun (the default, the chip's truth): a byte due while the UART's 32-byte
    // receive FIFO is full is lost, counted in rxOverrun and flagged in UARTRSR.OE, as on a
    // PL011 without flow control (a flash program/erase runs with interrupts off, so nothing
    // empties the FIFO meanwhile). --uart-rx hold: the byte waits instead (byte times counted
    // in rxHeld): the rig's earlier model, kept to show what the truth changes.
    this.rxHold = opt['uart-rx'] === 'hold';
    // --uart-rx-irq level (the default, the chip's truth): the PL011 raises its receive
    // interrupt when the FIFO holds its trigger level (UARTIFLS.RXIFLSEL: pico-sdk's 1/8, 4
    // bytes) and its receive-timeout interrupt once a byte has waited 32 bit periods with none
    // after it; a chip asleep on a UART (WFE in select.poll) is woken by those only. --uart-rx-irq
    // byte: stock rp2040js's interrupt on every byte, kept to show what the truth changes.
    this.rxIrqByte = opt['uart-rx-irq'] === 'byte';
    this.rtAt = [Infinity, Infinity]; // per UART: when its receive timeout fires (emulated ns)
    this.rxOverrun = [0, 0];
    this.rxHeld = [0, 0];
    this.rxHeldNext = [0, 0];
    this.resetCauses = {}; // resets of this rig by cause: watchdog, control, machine.reset
    this.replIn = [];
    this.mfrc = new MFRC522(() => this.now(), path.join(this.opt.state, 'ntag.json'));
    this.stats = null;
    this.resetRequested = false;
    this.instructions = 0;
    this.busyNs = 0;
    this.waitSkips = 0; // busy waits the rig skipped (skipWait) and the emulated time they took
    this.waitSkippedNs = 0;
    this.boot();
  }

  now() { return this.baseNs + this.clock.nanos; }

  boot() {
    if (this.clock) this.baseNs += this.clock.nanos;
    this.clock = new SimulationClock();
    const mcu = this.mcu = new RP2040(this.clock);
    mcu.logger = {debug() {}, info() {}, warn() {}, error(c, m) { process.stderr.write(`rig: ${c}: ${m}\n`); }};
    mcu.loadBootrom(this.bootrom);
    mcu.flash.set(this.mem);
    // as rp2040js's own runner: start at boot2 in flash (the ROM's reset path waits for an
    // event the emulator never sends); the ROM's flash and table functions are used from there
    mcu.core.PC = 0x10000000;
    this.waitPc = FASTWAIT ? findWaitLoop(mcu.flash) : -1;
    const stats = this.stats;
    this.flash = new W25Q(mcu.flash, this.fd, this.uid, () => this.now(),
      (ns) => { if (ns > 0) this.clock.tick(ns); });
    if (stats) this.flash.stats = stats;
    this.stats = this.flash.stats;
    this.flash.onCut = () => fs.fsyncSync(this.fd);
    this.flash.cutFile = path.join(this.opt.state, 'cut.json');
    installFlash(mcu, this.flash);
    // writes to flash land in mcu.flash; keep this.mem pointing at the live array
    this.mem = mcu.flash;
    this.flash.mem = mcu.flash;
    this.flash.cutAfter = this.cutAfter ?? -1;
    const wd = mcu.peripherals[0x40058];
    wd.onWatchdogTrigger = () => {
      // rp2040js 1.4.1 re-arms the watchdog's periodic alarm at its counter's 0, which is the
      // same instant: clock.tick() would fire it for ever and the rig would hang instead of
      // resetting the chip. This chip instance is done: stop its watchdog, reset at the next turn.
      wd.alarm.enable = false;
      wd.timer.enable = false;
      if (wd.reason === 1 && this.starved.length < 16) {
        // where the starved chip was (control `watchdog`): its registers and the return
        // addresses on its stack (code in flash: arm-none-eabi-addr2line on the image's ELF)
        const c = mcu.core, sp = c.SP >>> 0, ret = [];
        for (let a = sp; a < sp + 1024 && ret.length < 40; a += 4) {
          const w = mcu.readUint32(a) >>> 0;
          if ((w & 1) && w >= 0x10000000 && w < 0x10200000) ret.push(w);
        }
        this.starved.push({ns: this.now(), pc: c.PC >>> 0, lr: c.LR >>> 0, sp, primask: c.PM,
                           ipsr: c.IPSR, stack: ret});
      }
      // reason: 1 = the timer ran out, 2 = forced (machine.reset() triggers the watchdog)
      this.resetRequested = true; this.resetCause = wd.reason === 1 ? 'watchdog' : 'machine.reset';
    };
    this.excCount = {};
    this.starved = this.starved || []; // kept across chip instances (a reset makes a new one)
    const entry = mcu.core.exceptionEntry.bind(mcu.core);
    mcu.core.exceptionEntry = (n) => { this.excCount[n] = (this.excCount[n] || 0) + 1; return entry(n); };
    this.wireUarts();
    this.wireUsb();
    this.wireSpi();
    for (const [p, v] of Object.entries(this.pins)) mcu.gpio[p].setInputValue(!!v);
    this.uartNext = [0, 0];
    this.rtAt = [Infinity, Infinity];
    this.cardFree = 0;
  }

  wireUarts() {
    for (const i of [0, 1]) {
      const u = this.mcu.uart[i];
      u.checkInterrupts = function () {
        this.rp2040.setInterrupt(this.irq, !!(this.interruptStatus & this.interruptMask));
      };
      // UARTRSR/UARTECR (0x04): the overrun flag (bit 3), cleared by any write to UARTECR
      u.overrun = false;
      u.ifls = 0x12; // UARTIFLS at reset: both trigger levels at 1/2
      const read = u.readUint32.bind(u), write = u.writeUint32.bind(u);
      const rig = this;
      // the receive FIFO's trigger level in bytes (RXIFLSEL: 1/8, 1/4, 1/2, 3/4, 7/8 of 32)
      const level = () => [4, 8, 16, 24, 28][Math.min((u.ifls >> 3) & 7, 4)];
      const rxLevel = () => {
        if (u.rxFIFO.itemCount >= level()) u.interruptStatus |= 1 << 4;
        else u.interruptStatus &= ~(1 << 4);
      };
      if (!this.rxIrqByte) {
        u.feedByte = (value) => {
          u.rxFIFO.push(value);
          rxLevel();
          rig.rtAt[i] = rig.now() + 3.2 * byteNs(u); // 32 bit periods of a 10-bit character
          u.checkInterrupts();
        };
      }
      // UARTFR (0x18): TXFF while 32 written bytes wait in the transmit FIFO, TXFE when none
      // does, BUSY until the last one has left the shift register (stock rp2040js: TXFE always)
      u.readUint32 = (offset) => {
        if (offset === 0x04) return u.overrun ? 8 : 0;
        if (offset === 0x34) return u.ifls;
        if (offset === 0x00 && !rig.rxIrqByte) {
          const v = read(offset); // the FIFO's next byte (stock: RXINTR while any is left)
          rxLevel();
          if (u.rxFIFO.empty) { u.interruptStatus &= ~(1 << 6); rig.rtAt[i] = Infinity; }
          u.checkInterrupts();
          return v;
        }
        if (offset !== 0x18) return read(offset);
        const now = this.now(), q = this.txQ[i];
        let waiting = q.length;
        if (waiting && q[0][1] <= now) waiting--; // the byte on the wire is not in the FIFO
        return (read(offset) & ~0x80) | (waiting >= 32 ? 0x20 : 0) | (waiting ? 0 : 0x80)
          | (now < this.txEnd[i] ? 0x08 : 0);
      };
      u.writeUint32 = (offset, value) => {
        if (offset === 0x04) u.overrun = false;
        else if (offset === 0x34) { u.ifls = value & 0x3f; if (!rig.rxIrqByte) { rxLevel(); u.checkInterrupts(); } }
        else write(offset, value);
      };
      // transmit paced at the programmed baud rate: a byte written starts on the wire when the
      // one before it has left (pumpTx sends it then); stock rp2040js sends it at once and
      // raises the TX interrupt per byte, so a write of any length cost the chip no wait
      u.onByte = (b) => {
        const start = Math.max(this.now(), this.txEnd[i]);
        this.txQ[i].push([b, start]);
        this.txEnd[i] = start + byteNs(u);
        this.pumpTx(i);
      };
    }
    this.txQ = [[], []]; // per UART: [byte, emulated ns it starts on the wire], not sent yet
    this.txEnd = [0, 0]; // when the last byte written has left the wire
    this.txPrev = [-1, -1]; // the byte sent last
  }

  /** UART i's bytes whose start has come go to the wire (the socket). The TX interrupt is
   *  raised as the FIFO falls to its trigger level (pico-sdk's uart_set_irq_enables: 1/8, 4
   *  bytes), the PL011's edge; the chip's handler refills the FIFO then. */
  pumpTx(i) {
    const q = this.txQ[i], now = this.now();
    const oneByte = byteNs(this.mcu.uart[i]);
    let raise = false;
    while (q.length && q[0][1] <= now) {
      const [b, t] = q.shift();
      // a frame starts: after a pause (a new burst), or a link frame's first byte right after
      // the 0x00 that ended the one before it (frames queued back to back make one burst)
      if (t - this.uartTxNs[i] > 200e3 || (b !== 0 && this.txPrev[i] === 0)) {
        this.logPush(this.txStarts[i], t);
      }
      const fr = this.txFrames[i];
      if (b !== 0 && this.txPrev[i] <= 0) this.logPush(fr, [t, 0, 0]); // (-1: the first byte)
      const f = fr.length ? fr[fr.length - 1] : null;
      if (f && !f[2]) {
        f[1]++;
        if (b === 0) f[2] = t + oneByte; // its last byte has left the wire
      }
      this.txPrev[i] = b;
      this.uartTxNs[i] = t;
      this.uartTxBytes[i]++;
      this.send('uart' + i, Buffer.of(b));
      if (q.length === 4) raise = true; // the FIFO fell from 5 to 4 waiting
    }
    if (raise) {
      const u = this.mcu.uart[i];
      u.interruptStatus |= 1 << 5;
      u.checkInterrupts();
    }
  }

  wireUsb() {
    const cdc = this.cdc = new USBCDC(this.mcu.usbCtrl);
    const usb = this.mcu.usbCtrl;
    this.usbPending = null;
    usb.onEndpointRead = (ep, size) => {
      if (ep !== cdc.outEndpoint) return;
      if (!this.replIn.length) { this.usbPending = size; return; } // answer when data comes
      this.usbAnswer(size);
    };
    cdc.onSerialData = (buf) => {
      // the console's last 16 KiB are kept (control `console`): what a hung board last said
      this.console = Buffer.concat([this.console || Buffer.alloc(0), Buffer.from(buf)]);
      if (this.console.length > 16384) this.console = this.console.subarray(this.console.length - 16384);
      this.send('repl', Buffer.from(buf));
    };
    cdc.onDeviceConnected = () => { this.usbConnected = true; };
  }

  usbAnswer(size) {
    const n = Math.min(size, this.replIn.length);
    const buf = Uint8Array.from(this.replIn.splice(0, n));
    this.mcu.usbCtrl.endpointReadDone(this.cdc.outEndpoint, buf);
  }

  wireSpi() {
    const spi = this.mcu.spi[0];
    spi.onTransmit = (v) => spi.completeTransmit(this.mfrc.byte(v));
    const cs = this.mcu.gpio[17];
    this.mfrc.select(false);
    cs.addListener((v) => {
      const low = v === 0; // GPIOPinState.Low
      if (low !== this.mfrc.cs) this.mfrc.select(low);
    });
  }

  pump() {
    for (const i of [0, 1]) if (this.txQ[i].length) this.pumpTx(i);
    for (const i of [0, 1]) {
      // the receive timeout: a byte waited 32 bit periods in the FIFO with none after it
      if (this.rtAt[i] <= this.now()) {
        this.rtAt[i] = Infinity;
        const u = this.mcu.uart[i];
        if (!u.rxFIFO.empty) { u.interruptStatus |= 1 << 6; u.checkInterrupts(); }
      }
    }
    // host bytes into the chip: UART RX paced at the programmed baud rate, USB on demand
    for (const i of [0, 1]) {
      const q = this.uartIn[i];
      if (!q.length) continue;
      const u = this.mcu.uart[i];
      const t = this.now();
      if (!u.enabled) { // no receiver yet (booting): the bytes are lost
        this.uartTaken[i] += q.length; q.length = 0; this.uartMarks[i].length = 0; continue;
      }
      this.burstStart(i);
      if (t < this.uartNext[i]) continue;
      const oneByte = byteNs(u);
      // UARTCR.RTSEN (bit 14): the firmware enabled hardware flow control, so the UART
      // deasserts RTS while its receive FIFO is full and the host (its adapter's CTS) waits:
      // a byte is held, not lost, as in --uart-rx hold
      if (this.rxHold || (u.ctrlRegister & 0x4000)) {
        if (!u.rxFIFO.full) {
          u.feedByte(q.shift());
          this.uartTaken[i]++;
          if (!q.length) this.logPush(this.rxEnds[i], t);
          this.uartNext[i] = t + oneByte;
          this.burstStart(i);
        } else if (t >= this.rxHeldNext[i]) {
          this.rxHeld[i]++;
          this.rxHeldNext[i] = t + oneByte;
        }
        continue;
      }
      // every byte whose time has come, one byte time apart from the burst's first: after a
      // flash erase (the clock jumped 45 ms with interrupts off) that is hundreds at once, and
      // those beyond the FIFO's 32 are lost
      while (q.length && t >= this.uartNext[i]) {
        if (!u.rxFIFO.full) u.feedByte(q.shift());
        else { q.shift(); this.rxOverrun[i]++; u.overrun = true; }
        this.uartTaken[i]++;
        if (!q.length) this.logPush(this.rxEnds[i], t);
        this.uartNext[i] += oneByte;
        this.burstStart(i);
      }
    }
    if (this.usbPending !== null && this.replIn.length && this.cdc.outEndpoint >= 0) {
      const s = this.usbPending; this.usbPending = null; this.usbAnswer(s);
    }
  }

  /** A queued host burst is next on UART i: its bytes are not due before its start. */
  burstStart(i) {
    const m = this.uartMarks[i];
    if (m.length && m[0][0] === this.uartTaken[i]) this.uartNext[i] = Math.max(this.uartNext[i], m.shift()[1]);
  }

  logPush(log, t) {
    log.push(t);
    if (log.length > 4096) log.splice(0, 2048);
  }

  nextInputNs() {
    // the next UART input due, or the next byte to start on a UART's wire (its interrupt)
    let t = Infinity;
    for (const i of [0, 1]) {
      t = Math.min(t, this.rtAt[i]); // a receive timeout (its interrupt wakes the chip)
      if (this.uartIn[i].length) t = Math.min(t, this.uartNext[i]);
      if (this.txQ[i].length) t = Math.min(t, this.txQ[i][0][1]);
    }
    return t;
  }

  wallNow() {
    // wall-clock ns since the rig started, scaled by --rate
    return Number(process.hrtime.bigint() - this.wall0) * this.rate;
  }

  run() {
    const {mcu, clock} = this;
    let wallNs = this.wallNow();
    if (this.idleRate) {
      const behind = wallNs - this.wallSkew - this.now();
      if (behind > 20e6) this.wallSkew += behind - 20e6; // catch up 20 ms at most
      wallNs -= this.wallSkew;
    }
    const sliceEnd = Date.now() + 25;
    for (;;) {
      if (this.resetRequested) {
        this.resetRequested = false; this.resets++;
        const c = this.resetCause || 'machine.reset';
        this.resetCauses[c] = (this.resetCauses[c] || 0) + 1;
        this.resetCause = null;
        this.boot(); break;
      }
      this.pump();
      if (mcu.core.waiting) {
        // to the next alarm: 0 when one is due now (a card put down while the chip sleeps), not
        // "none" as rp2040js's nanosToNextAlarm has it, which moved the clock by the whole of its
        // lag behind the wall clock in one tick, every alarm on the way firing with the chip
        // asleep: the watchdog's too, on a shoe that fed it every tick
        const next = clock.nextAlarm;
        const limit = wallNs - this.now();
        let step = next ? Math.max(0, next.nanos - clock.nanos) : Infinity;
        const nin = this.nextInputNs() - this.now();
        if (nin > 0 && nin < step) step = nin;
        if (step > limit) {
          // idle: never ahead of wall time; come back when time or input is due
          if (limit > 0) clock.tick(limit);
          const waitMs = Math.max(1, Math.min(20, (step - Math.max(limit, 0)) / 1e6));
          this.timer = setTimeout(() => this.run(), waitMs);
          return;
        }
        clock.tick(step);
        continue;
      }
      const c0 = clock.nanos;
      let i = 0;
      const prof = this.profile, watch = this.watch, core = mcu.core, waitPc = this.waitPc;
      if (!prof && !watch) {
        // the plain loop: the clock ticks only when an alarm is due (SimulationClock.tick's
        // own test, without the call for every instruction)
        for (; i < 4000 && !core.waiting; i++) {
          if (core.PC === waitPc && this.skipWait()) break; // inputs due: pump them first
          const cycles = core.executeInstruction(); // may itself tick (flash.js's busy wait)
          const t = clock.nanosCounter + cycles * CYCLE_NS;
          const a = clock.nextAlarm;
          if (a !== null && a.nanos <= t) clock.tick(t - clock.nanosCounter);
          else clock.nanosCounter = t;
        }
      }
      for (; i < 4000 && !core.waiting; i++) {
        if (core.PC === waitPc && this.skipWait()) break;
        if (prof && (i & 63) === 0) prof.set(mcu.core.PC, (prof.get(mcu.core.PC) || 0) + 1);
        if (watch && watch.has(mcu.core.PC)) {
          // the entry of a watched function: count its caller (the return address in LR)
          const k = mcu.core.PC + ':' + ((mcu.core.LR & ~1) >>> 0);
          this.callers.set(k, (this.callers.get(k) || 0) + 1);
          if (this.bytesAt !== null && this.bytesAt.has(mcu.core.PC)) {
            // the size asked of the allocator (its first argument), summed by caller
            this.bytesBy.set(k, (this.bytesBy.get(k) || 0) + (mcu.core.registers[0] >>> 0));
          }
          const f = this.frames;
          if (f && mcu.core.PC === f.call) f.last = mcu.core.registers[0] >>> 0;
          else if (f && mcu.core.PC === f.alloc && f.last !== null
                   && ((mcu.core.LR & ~1) >>> 0) - f.call < 0x400) {
            // a heap frame: the function object fun_bc_call was called with, and the size
            const key = f.last + ':' + (mcu.core.registers[0] >>> 0);
            f.counts.set(key, (f.counts.get(key) || 0) + 1);
          }
        }
        clock.tick(mcu.core.executeInstruction() * CYCLE_NS);
      }
      this.instructions += i;
      this.busyNs += clock.nanos - c0;
      if (this.rate < 1 && this.now() > wallNs) {
        this.timer = setTimeout(() => this.run(), 1); // --rate: never ahead of the scaled wall
        return;
      }
      if (Date.now() > sliceEnd) break;
    }
    this.timer = setImmediate(() => this.run());
  }

  skipWait() {
    // at mp_hal_delay_us's loop (findWaitLoop): the clock to its end, to the next UART input due
    // or to the next alarm, whichever comes first (an alarm's interrupt is taken as the loop
    // goes on, as on the chip). True if it stopped where an input is due: the caller pumps it
    // before the loop goes on. An input due already (one the UART holds back while its FIFO
    // is full, for the chip's interrupt to make room): no skip, the loop runs as on the chip.
    const {clock, mcu} = this, r = mcu.core.registers;
    let dt = ((r[5] >>> 0) * 2 ** 32 + (r[4] >>> 0)) * 1000 - clock.nanos;
    const nin = this.nextInputNs() - this.now();
    if (nin <= 0) return false;
    let input = false;
    if (nin < dt) { dt = nin; input = true; }
    const a = clock.nextAlarm;
    if (a !== null && a.nanos - clock.nanos < dt) { dt = a.nanos - clock.nanos; input = false; }
    if (dt <= 0) return false;
    clock.tick(dt);
    this.waitSkips++;
    this.waitSkippedNs += dt;
    return input;
  }

  send(name, buf) {
    const c = this.clients[name];
    if (c && !c.destroyed) c.write(buf);
  }

  onData(name, data) {
    if (name === 'repl') { for (const b of data) this.replIn.push(b); }
    else if (name === 'uart0' || name === 'uart1') {
      const i = +name[4], q = this.uartIn[i];
      // a burst starts arriving now (UART1: or as long after the last as the host waited, see
      // uartMarks): its bytes are due one byte time apart from there
      let at = this.now();
      if (i === 1) {
        // unscaled by --rate, as on a loaded machine: a dealer's gaps are wall time
        const wall = Number(process.hrtime.bigint() - this.wall0);
        if (this.hostWall[1] !== null) {
          at = Math.max(at, this.hostAt[1] + Math.min(wall - this.hostWall[1], HOST_GAP_NS));
        }
        this.hostWall[1] = wall;
        this.hostAt[1] = at;
      }
      if (!q.length) this.uartNext[i] = Math.max(this.uartNext[i], at);
      else if (at > this.now()) this.uartMarks[i].push([this.uartPushed[i], at]);
      for (const b of data) q.push(b);
      this.uartPushed[i] += data.length;
    }
    this.kick();
  }

  kick() {
    if (this.timer && this.timer.constructor.name === 'Timeout') {
      clearTimeout(this.timer); this.timer = setImmediate(() => this.run());
    }
  }

  control(msg) {
    const op = msg.op;
    // chip_ns: this chip instance's own clock (its timer, time.ticks_us() = chip_ns / 1000)
    if (op === 'clock') return {ns: this.now(), resets: this.resets, chip_ns: this.clock.nanos};
    if (op === 'pin') {
      this.setPin(msg.pin, msg.value);
      this.kick();
      return {ns: this.now()};
    }
    if (op === 'get_pin') {
      const g = this.mcu.gpio[msg.pin];
      return {value: g.outputEnable ? (g.outputValue ? 1 : 0) : null, ns: this.now()};
    }
    if (op === 'tags') { this.mfrc.setTags(msg.tags || []); return {ns: this.now()}; }
    if (op === 'feed') {
      const q = this.uartIn[msg.uart];
      for (const b of Buffer.from(msg.hex, 'hex')) q.push(b);
      this.uartPushed[msg.uart] += msg.hex.length / 2;
      this.kick();
      return {ns: this.now()};
    }
    if (op === 'card') return this.card(msg);
    if (op === 'profile') {
      // PC samples (one per 64 instructions) between {on:true} and {on:false}: top N addresses;
      // {on:true, callers:[addr, ...]} also counts every call of those functions by its caller
      // (the LR at their first instruction): `callers` [[function, caller, calls], ...]
      if (msg.on) {
        this.profile = new Map();
        this.watch = msg.callers ? new Set(msg.callers) : null;
        this.callers = new Map();
        // {frames: [fun_bc_call, m_malloc_maybe]}: also count the function objects whose call
        // put their VM state on the heap (MicroPython does above 11 words), by object and size
        this.frames = msg.frames ? {call: msg.frames[0], alloc: msg.frames[1], last: null,
                                    counts: new Map()} : null;
        if (this.frames) { this.watch = this.watch || new Set(); msg.frames.forEach(a => this.watch.add(a)); }
        // {bytes: [m_malloc, ...]}: also sum the bytes asked of those functions (r0 at their
        // entry) by function and caller
        this.bytesAt = msg.bytes ? new Set(msg.bytes) : null;
        this.bytesBy = new Map();
        if (this.bytesAt) { this.watch = this.watch || new Set(); msg.bytes.forEach(a => this.watch.add(a)); }
        return {};
      }
      const p = this.profile || new Map(); this.profile = null; this.watch = null;
      const top = [...p.entries()].sort((a, b) => b[1] - a[1]).slice(0, msg.top || 200);
      // a map of 'a:b' -> n as [[a, b, n], ...], largest n first
      const rows = (m) => [...(m || new Map()).entries()]
        .map(([k, n]) => k.split(':').map(Number).concat([n])).sort((a, b) => b[2] - a[2]);
      const callers = rows(this.callers), frames = rows(this.frames && this.frames.counts);
      const bytes = rows(this.bytesBy);
      this.frames = null; this.bytesAt = null; this.bytesBy = null;
      return {samples: [...p.values()].reduce((a, b) => a + b, 0), top, callers, frames, bytes};
    }
    if (op === 'uart_log') {
      const since = msg.since || 0, u = msg.uart || 0;
      return {tx: this.txStarts[u].filter((t) => t >= since),
              frames: this.txFrames[u].filter((f) => f[0] >= since),
              rx: this.rxEnds[u].filter((t) => t >= since), ns: this.now()};
    }
    if (op === 'watchdog') return {starved: this.starved};
    if (op === 'console') return {text: (this.console || Buffer.alloc(0)).toString('latin1'), ns: this.now()};
    if (op === 'uart_tx') return {ns: this.uartTxNs[msg.uart], bytes: this.uartTxBytes[msg.uart]};
    if (op === 'flash') return Object.assign({ns: this.now()}, this.stats.toJSON());
    if (op === 'cut') { this.cutAfter = msg.after; this.flash.cutAfter = msg.after; return {}; }
    if (op === 'reset') {
      // {cut: n}: the power goes during the new chip instance's (n+1)-th program/erase, armed
      // at its boot, so a flash write the running chip makes before the reset is not the one cut
      if (msg.cut !== undefined) this.cutAfter = msg.cut;
      this.resetRequested = true; this.resetCause = 'control'; this.kick(); return {};
    }
    if (op === 'uf2') {
      // the BOOTSEL drive: a UF2 file copied onto it is programmed, then the chip restarts
      const sectors = programUF2(this.mem, this.fd, fs.readFileSync(msg.path), msg.path);
      this.resetRequested = true; this.resetCause = 'uf2'; this.kick();
      return {sectors};
    }
    if (op === 'stats') {
      return {ns: this.now(), resets: this.resets, wall_ns: Number(process.hrtime.bigint() - this.wall0),
              usb: !!this.usbConnected, exceptions: this.excCount, pc: this.mcu.core.PC, instructions: this.instructions, busy_ns: this.busyNs, wait_skips: this.waitSkips, wait_skipped_ns: this.waitSkippedNs, fast_wait: this.waitPc !== -1, flash: this.stats.toJSON(), spi_transfers: this.mfrc.transfers, rfid_field: this.mfrc.field, rfid_polls: this.mfrc.polls,
              rx_overrun: this.rxOverrun, rx_held: this.rxHeld, reset_causes: this.resetCauses};
    }
    return {error: 'unknown op ' + op};
  }

  /**
   * A card leaving the shoe, in emulated time: cards queue behind each other (one every
   * pitch_ms, as a dealer's hand or the shoe's exit allows). The reader sees it (optical: its
   * code line on UART1; rfid: a tag holding the code in the MFRC522's field for dwell_ms, or the
   * authenticated tag `tag` (an NTAG 424 DNA's spec, host_tools/sim/ntag424.py)), then
   * it breaks the exit beam (GP14 low) beam_at_ms after it started, for beam_ms. delay_ms: not
   * before that long from now (a benchmark scheduling cards ahead of the chip's read loop).
   * Returns the emulated ns at which the card reaches the reader.
   */
  card(msg) {
    const ms = (x, d) => (x === undefined ? d : x) * 1e6;
    const now = this.now() + ms(msg.delay_ms, 0);
    const start = Math.max(now, this.cardFree || 0);
    this.cardFree = start + ms(msg.pitch_ms, 120);
    const at = (t, fn) => { const a = this.clock.createAlarm(fn); a.schedule(Math.max(0, t - this.now())); };
    if (msg.reader === 'rfid') {
      at(start, () => this.mfrc.setTags([msg.tag || {uid: msg.uid, code: msg.code}]));
      at(start + ms(msg.dwell_ms, 60), () => this.mfrc.setTags([]));
    } else {
      at(start, () => {
        // the line starts on the wire now, a byte time apart as any burst (onData): without
        // this a line after a pause arrived whole at once, its bytes due since the last one
        const q = this.uartIn[1];
        if (!q.length) this.uartNext[1] = Math.max(this.uartNext[1], this.now());
        for (const b of Buffer.from(msg.code + '\r\n', 'latin1')) q.push(b);
        this.uartPushed[1] += msg.code.length + 2;
      });
    }
    if (msg.beam !== false) {
      at(start + ms(msg.beam_at_ms, 40), () => this.setPin(14, 0));
      at(start + ms(msg.beam_at_ms, 40) + ms(msg.beam_ms, 8), () => this.setPin(14, 1));
    }
    this.kick();
    return {ns: start};
  }

  setPin(pin, v) {
    this.pins[pin] = v ? 1 : 0;
    this.mcu.gpio[pin].setInputValue(!!v);
  }

  listen(cb) {
    const names = ['repl', 'uart0', 'uart1', 'control'];
    const ports = {};
    let left = names.length;
    for (const name of names) {
      const srv = net.createServer((sock) => {
        sock.setNoDelay(true);
        const old = this.clients[name];
        if (old) old.destroy();
        this.clients[name] = sock;
        if (name === 'control') {
          let buf = '';
          sock.on('data', (d) => {
            buf += d.toString();
            let k;
            while ((k = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, k); buf = buf.slice(k + 1);
              let out;
              try { out = this.control(JSON.parse(line)); } catch (e) { out = {error: String(e)}; }
              sock.write(JSON.stringify(out) + '\n');
            }
          });
        } else sock.on('data', (d) => this.onData(name, d));
        sock.on('error', () => {});
        sock.on('close', () => { if (this.clients[name] === sock) delete this.clients[name]; });
      });
      srv.listen(this.opt.ports[name] || 0, this.opt.host, () => {
        ports[name] = srv.address().port;
        if (--left === 0) cb(ports);
      });
    }
  }
}

if (require.main === module) {
  const rig = new Rig(args());
  rig.listen((ports) => {
    process.stdout.write(JSON.stringify(Object.assign({pid: process.pid}, ports)) + '\n');
    rig.run();
  });
}

module.exports = {Rig};
