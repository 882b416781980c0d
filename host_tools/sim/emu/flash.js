'use strict';
/*
 * The Pico's QSPI flash (Winbond W25Q16JV, 2 MB) behind the RP2040's SSI, for rp2040js.
 *
 * Stock rp2040js 1.4.1 ignores every flash command, so littlefs cannot be created. This model
 * replaces the SSI (0x18000000) and IO_QSPI (0x40018000, chip select override) peripherals:
 *
 *   firmware (boot ROM flash_range_program / erase, pico-sdk flash_get_unique_id)
 *        -> SSI DR0 byte by byte, CS forced through IO_QSPI GPIO_QSPI_SS_CTRL.OUTOVER
 *        -> W25Q: WREN/WRDI, RDSR1/2/3, PP (0x02), SE 4K (0x20), BE 32K (0x52), BE 64K (0xD8),
 *           chip erase (0xC7/0x60), unique id (0x4B), JEDEC id (0x9F), READ (0x03)
 *
 * Every program/erase is written through to the state file (pwrite) when it completes (CS
 * high), so killing the emulator is a power cut: what reached the file is what the chip holds.
 * `cut` makes the rig kill itself in the middle of a chosen program/erase (half of it applied).
 * Program/erase cost emulated time (datasheet typical: page program 0.4 ms, sector erase 45 ms,
 * 32K block 120 ms, 64K block 150 ms, chip 5 s): the status register reads BUSY until then; as
 * the firmware spins on it with interrupts off, the rig advances the clock to the end at once.
 */
const fs = require('fs');

const FLASH_SIZE = 2 * 1024 * 1024;
const T_PP = 400e3, T_SE = 45e6, T_BE32 = 120e6, T_BE64 = 150e6, T_CE = 5000e6; // ns

/* programmed: bytes sent by page programs (whole 256-byte pages from the ROM's
 * flash_range_program: the traffic); changed: those that were not 0xFF (bits actually
 * programmed: what the writer meant to store). */
class FlashStats {
  constructor() { this.programmed = 0; this.changed = 0; this.pages = 0; this.erases = 0;
                  this.erasedBytes = 0; this.eraseAt = []; }
  toJSON() { return {programmed: this.programmed, changed: this.changed, pages: this.pages,
                     erases: this.erases, erased_bytes: this.erasedBytes,
                     erase_at: this.eraseAt}; }
}

class W25Q {
  /** mem: the emulator's flash array; fd: the state file, written through; clock: () => ns */
  constructor(mem, fd, uid, clock, tick) {
    this.mem = mem; this.fd = fd; this.uid = uid; this.now = clock; this.tick = tick;
    this.wel = false; this.busyUntil = 0; this.stats = new FlashStats();
    this.cutAfter = -1; // >= 0: power cut during the (cutAfter+1)-th next program/erase
    this.onCut = null;
    this.cutFile = null; // where the cut operation is recorded ({op, addr}) before dying
    this.select(false);
  }
  select(on) {
    if (!on && this.selected) this.finish();
    this.selected = on; this.cmd = -1; this.n = 0; this.addr = 0; this.page = [];
  }
  status() {
    if (this.busyUntil > this.now()) return 0x01 | (this.wel ? 0x02 : 0);
    return this.wel ? 0x02 : 0;
  }
  byte(v) {
    // one byte on the bus; returns the byte the flash drives back
    const i = this.n++;
    if (i === 0) { this.cmd = v; return 0xff; }
    const c = this.cmd;
    if (c === 0x05) {
      const s = this.status();
      if (s & 1) { this.tick(this.busyUntil - this.now()); } // firmware spins here, IRQs off
      return s;
    }
    if (c === 0x35) return 0x02; // QE set: boot2 need not write the status register
    if (c === 0x15) return 0x00;
    if (c === 0x9f) return [0xef, 0x40, 0x15][i - 1] ?? 0;
    if (c === 0x4b) return i >= 5 && i < 13 ? this.uid[i - 5] : 0;
    if (c === 0x02 || c === 0x20 || c === 0x52 || c === 0xd8 || c === 0x03 || c === 0x0b) {
      if (i <= 3) { this.addr = (this.addr << 8) | v; return 0; }
      if (c === 0x02) { this.page.push(v); return 0; }
      if (c === 0x03) return this.mem[(this.addr + i - 4) % FLASH_SIZE];
      if (c === 0x0b) return i === 4 ? 0 : this.mem[(this.addr + i - 5) % FLASH_SIZE];
    }
    return 0;
  }
  finish() {
    const c = this.cmd;
    if (c === 0x06) { this.wel = true; return; }
    if (c === 0x04) { this.wel = false; return; }
    if (!this.wel || this.busyUntil > this.now()) return;
    if (c === 0x02 && this.n > 4) this.program(this.addr % FLASH_SIZE, this.page);
    else if (c === 0x20 && this.n >= 4) this.erase(this.addr & ~0xfff, 0x1000, T_SE);
    else if (c === 0x52 && this.n >= 4) this.erase(this.addr & ~0x7fff, 0x8000, T_BE32);
    else if (c === 0xd8 && this.n >= 4) this.erase(this.addr & ~0xffff, 0x10000, T_BE64);
    else if (c === 0xc7 || c === 0x60) this.erase(0, FLASH_SIZE, T_CE);
    else return;
    this.wel = false;
  }
  cutNow() {
    if (this.cutAfter < 0) return false;
    if (this.cutAfter-- > 0) return false;
    return true;
  }
  program(addr, data) {
    // page program wraps inside the 256-byte page; bits only go 1 -> 0
    const base = addr & ~0xff;
    const cut = this.cutNow();
    const n = cut ? data.length >> 1 : data.length;
    let lo = 256, hi = -1;
    for (let k = 0; k < n; k++) {
      const a = base + ((addr + k) & 0xff);
      this.mem[a] &= data[k];
      lo = Math.min(lo, a - base); hi = Math.max(hi, a - base);
    }
    if (hi >= lo) fs.writeSync(this.fd, this.mem, base + lo, hi - lo + 1, base + lo);
    if (cut) return this.powerCut('program', addr);
    let changed = 0;
    for (let k = 0; k < data.length; k++) if (data[k] !== 0xff) changed++;
    this.stats.programmed += data.length; this.stats.changed += changed; this.stats.pages++;
    this.busyUntil = this.now() + T_PP;
  }
  erase(addr, size, t) {
    const cut = this.cutNow();
    const n = cut ? size >> 1 : size;
    this.mem.fill(0xff, addr, addr + n);
    fs.writeSync(this.fd, this.mem, addr, n, addr);
    if (cut) return this.powerCut('erase', addr);
    this.stats.erases++; this.stats.erasedBytes += size;
    const log = this.stats.eraseAt;   // when the last 64 erases began, emulated ns
    log.push(this.now()); if (log.length > 64) log.shift();
    this.busyUntil = this.now() + t;
  }
  powerCut(op, addr) {
    if (this.cutFile) fs.writeFileSync(this.cutFile, JSON.stringify({op, addr}));
    if (this.onCut) this.onCut();
    process.kill(process.pid, 'SIGKILL');
  }
}

/** The SSI with FIFOs, forwarding bytes to the flash while CS is forced low (or auto mode). */
function installFlash(rp2040, flashModel) {
  const {BasePeripheral} = require('rp2040js');
  let csOver = 0; // IO_QSPI SS OUTOVER: 0 normal (SSI drives CS), 2 low, 3 high
  const rx = [];
  let auto = false;
  class IOQSPI extends BasePeripheral {
    readUint32(offset) {
      if (offset === 0x0c) return csOver << 8;
      return 0;
    }
    writeUint32(offset, value) {
      if (offset === 0x0c) {
        const over = (value >> 8) & 3;
        if (over === 2 && csOver !== 2) { flashModel.select(true); auto = false; }
        if (over !== 2 && csOver === 2) flashModel.select(false);
        if (over === 0 && csOver !== 0) auto = false;
        csOver = over;
      }
    }
  }
  class SSI extends BasePeripheral {
    constructor(r, n) { super(r, n); this.regs = new Uint32Array(64); }
    readUint32(offset) {
      switch (offset) {
        case 0x20: return 0; // TXFLR: the model answers at once
        case 0x24: return rx.length; // RXFLR
        case 0x28: return 0x06 | (rx.length ? 0x08 : 0); // SR: TFNF TFE (RFNE), never busy
        case 0x58: return 0x51535049;
        case 0x5c: return 0x3430312a;
        case 0x60: { // DR0
          const v = rx.length ? rx.shift() : 0;
          if (!rx.length && auto) { flashModel.select(false); auto = false; }
          return v;
        }
      }
      return this.regs[offset >> 2];
    }
    writeUint32(offset, value) {
      if (offset === 0x60) {
        if (csOver === 3) { rx.push(0); return; }
        if (csOver === 0 && !auto) { flashModel.select(true); auto = true; }
        rx.push(flashModel.byte(value & 0xff));
        if (rx.length > 16) rx.shift();
        return;
      }
      if (offset === 0x08 && !(value & 1)) { // SSIENR=0 clears the FIFOs
        rx.length = 0;
        if (auto) { flashModel.select(false); auto = false; }
      }
      this.regs[offset >> 2] = value;
    }
  }
  rp2040.peripherals[0x18000] = new SSI(rp2040, 'SSI');
  rp2040.peripherals[0x40018] = new IOQSPI(rp2040, 'IO_QSPI');
}

/** The main-flash blocks of a UF2 file: [{addr (from the start of flash), data}], or throws. */
function uf2Blocks(uf2, name) {
  const out = [];
  for (let off = 0; off + 512 <= uf2.length; off += 512) {
    const b = uf2.subarray(off, off + 512);
    if (b.readUInt32LE(0) !== 0x0a324655 || b.readUInt32LE(4) !== 0x9e5d5157) {
      throw new Error('not a UF2 file: ' + name);
    }
    if (b.readUInt32LE(8) & 1) continue; // not main flash
    const addr = b.readUInt32LE(12) - 0x10000000, size = b.readUInt32LE(16);
    if (addr < 0 || addr + size > FLASH_SIZE || size > 476) throw new Error('UF2 block outside flash');
    out.push({addr, data: b.subarray(32, 32 + size)});
  }
  if (!out.length) throw new Error('no flash blocks in UF2 file: ' + name);
  return out;
}

/** A 2 MB image: the state file if there is one, else the UF2's blocks on erased flash. */
function loadImage(stateFile, uf2Path) {
  if (fs.existsSync(stateFile) && fs.statSync(stateFile).size === FLASH_SIZE) {
    return new Uint8Array(fs.readFileSync(stateFile));
  }
  const img = new Uint8Array(FLASH_SIZE).fill(0xff);
  for (const {addr, data} of uf2Blocks(fs.readFileSync(uf2Path), uf2Path)) img.set(data, addr);
  fs.writeFileSync(stateFile + '.tmp', img);
  fs.renameSync(stateFile + '.tmp', stateFile);
  return img;
}

/**
 * What the boot ROM's BOOTSEL drive does with a UF2 file copied onto it: every 4 KB sector a
 * block lands in is erased, then the blocks are programmed; the rest of the flash (MicroPython's
 * filesystem, the journal's rings) is left as it was. mem: the live flash array; fd: the state
 * file (written through). Returns the number of sectors erased.
 */
function programUF2(mem, fd, uf2, name) {
  const blocks = uf2Blocks(uf2, name);
  const sectors = new Set();
  for (const {addr, data} of blocks) {
    for (let s = addr >> 12; s <= (addr + data.length - 1) >> 12; s++) sectors.add(s);
  }
  for (const s of sectors) mem.fill(0xff, s << 12, (s + 1) << 12);
  for (const {addr, data} of blocks) mem.set(data, addr);
  for (const s of sectors) fs.writeSync(fd, mem, s << 12, 4096, s << 12);
  fs.fsyncSync(fd);
  return sectors.size;
}

module.exports = {W25Q, installFlash, loadImage, programUF2, FLASH_SIZE};
