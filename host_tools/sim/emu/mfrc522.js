'use strict';
/*
 * The MFRC522 on the emulated Pico's SPI0 (CS GP17), with ISO 14443-A Type 2 tags in its field.
 *
 * A port of the register-level model tests/fakes/mfrc522_chip.py (datasheet 8.1.2 framing,
 * FIFO, CommandReg Idle/CalcCRC/Transceive/SoftReset, ComIrq/DivIrq Set1 writes, CRC_A, the
 * timer) without its fault modes, kept in JavaScript so that every SPI byte is answered inside
 * the emulator's instruction loop: no host round trip, so host delays never become chip time.
 * Unlike the Python model it has air time: a transceive's answer (or the timer's TimerIRq when
 * nobody answers) appears only after the frame's time at 106 kbit/s in emulated time.
 *
 * The control channel sets the field: [{uid: hex, code: "ABC"}] (code at page 4, the firmware's
 * layout) or {uid, pages: hex}.
 */
const COMMAND = 0x01, COMIRQ = 0x04, DIVIRQ = 0x05, ERROR = 0x06, STATUS1 = 0x07,
  FIFODATA = 0x09, FIFOLEVEL = 0x0a, CONTROL = 0x0c, BITFRAMING = 0x0d, COLL = 0x0e,
  MODE = 0x11, TXCONTROL = 0x14, CRC_H = 0x21, CRC_L = 0x22, TMODE = 0x2a, TPRESCALER = 0x2b,
  TRELOAD_H = 0x2c, TRELOAD_L = 0x2d, VERSION = 0x37, COMIEN = 0x02;
const READ_ONLY = new Set([VERSION, STATUS1, 0x08, ERROR, CRC_H, CRC_L]);
const CRC_PRESETS = [0x0000, 0x6363, 0xa671, 0xffff];
const FDT_NS = 86e3, BIT_NS = 1e9 / 106e3;

function crcA(data, preset = 0x6363) {
  let crc = preset;
  for (let b of data) {
    b ^= crc & 0xff;
    b = (b ^ (b << 4)) & 0xff;
    crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xffff;
  }
  return [crc & 0xff, (crc >> 8) & 0xff];
}
const withCrc = (d) => d.concat(crcA(d));

class Tag {
  constructor(uid, pages, npages = 45) {
    this.uid = uid;
    this.mem = new Array(npages * 4).fill(0);
    pages.forEach((v, i) => { if (i < this.mem.length) this.mem[i] = v; });
    this.state = 0; this.level = 1; // 0 idle 1 ready 2 active 3 halt
  }
  static fromSpec(s) {
    const uid = Array.from(Buffer.from(s.uid, 'hex'));
    if (uid.length !== 4 && uid.length !== 7) throw new Error('uid must be 4 or 7 bytes');
    let pages;
    if (s.pages !== undefined) pages = Array.from(Buffer.from(s.pages, 'hex'));
    else {
      pages = new Array(16).fill(0);
      uid.slice(0, 4).forEach((v, i) => { pages[i] = v; });
      const code = Array.from(Buffer.from(s.code, 'latin1'));
      pages = pages.concat(code, new Array(16 - code.length).fill(0));
    }
    return new Tag(uid, pages);
  }
  cl(level) {
    const u = this.uid;
    const part = u.length === 4 ? u : level === 1 ? [0x88].concat(u.slice(0, 3)) : u.slice(3, 7);
    return part.concat([part[0] ^ part[1] ^ part[2] ^ part[3]]);
  }
  respond(f, last) {
    if (last === 7 && f.length === 1 && (f[0] === 0x26 || f[0] === 0x52)) {
      if (f[0] === 0x26 && this.state === 3) return null;
      if (this.state === 0 || this.state === 3 || f[0] === 0x52) {
        this.state = 1; this.level = 1;
        return [this.uid.length === 7 ? [0x44, 0] : [0x04, 0], 0];
      }
      return null;
    }
    if (last !== 0) return null;
    if (this.state === 1) {
      const sel = this.level === 1 ? 0x93 : 0x95;
      if (f.length === 2 && f[0] === sel && f[1] === 0x20) return [this.cl(this.level), 0];
      if (f.length === 9 && f[0] === sel && f[1] === 0x70) {
        const c = crcA(f.slice(0, 7));
        const want = this.cl(this.level);
        if (c[0] !== f[7] || c[1] !== f[8] || want.some((v, i) => v !== f[2 + i])) {
          this.state = 0; return null;
        }
        let sak = 0;
        if (this.uid.length === 7 && this.level === 1) { this.level = 2; sak = 0x04; }
        else this.state = 2;
        return [withCrc([sak]), 0];
      }
      this.state = 0; return null;
    }
    if (this.state === 2) {
      if (f.length === 4 && f[0] === 0x50 && f[1] === 0) {
        const c = crcA(f.slice(0, 2));
        if (c[0] === f[2] && c[1] === f[3]) this.state = 3;
        return null;
      }
      if (f.length === 4 && f[0] === 0x30) {
        const c = crcA(f.slice(0, 2));
        if (c[0] !== f[2] || c[1] !== f[3]) { this.state = 0; return [[0x01], 4]; }
        const n = this.mem.length / 4;
        if (f[1] >= n) { this.state = 0; return [[0x00], 4]; }
        const data = [];
        for (let i = 0; i < 4; i++) {
          const p = (f[1] + i) % n;
          data.push(...this.mem.slice(p * 4, p * 4 + 4));
        }
        return [withCrc(data), 0];
      }
      this.state = 0; return null;
    }
    return null;
  }
}

class MFRC522 {
  constructor(now) {
    this.now = now; this.tags = []; this.pending = null; this.transfers = 0;
    this.reset(); this.cs = false;
  }
  reset() {
    const r = this.regs = new Uint8Array(64);
    r[COMMAND] = 0x20; r[COMIEN] = 0x80; r[COMIRQ] = 0x14; r[STATUS1] = 0x21;
    r[CONTROL] = 0x10; r[MODE] = 0x3f; r[TXCONTROL] = 0x80; r[VERSION] = 0x92;
    this.fifo = []; this.pending = null;
  }
  setTags(specs) {
    for (const t of this.tags) { t.state = 0; t.level = 1; }
    this.tags = specs.map(Tag.fromSpec);
  }
  select(on) { this.cs = on; this.n = 0; this.first = 0; this.prev = 0; if (on) this.transfers++; }
  byte(v) {
    // one SPI byte while CS is low; returns MISO
    if (!this.cs) return 0xff;
    const i = this.n++;
    if (i === 0) { this.first = v; this.prev = v; return 0; }
    if (this.first & 0x80) {
      const a = this.prev; this.prev = v;
      return this.read((a >> 1) & 0x3f);
    }
    this.write((this.first >> 1) & 0x3f, v);
    return 0;
  }
  settle() {
    const p = this.pending;
    if (p && this.now() >= p.at) { this.pending = null; p.apply(); }
  }
  read(a) {
    this.settle();
    if (a === FIFODATA) return this.fifo.length ? this.fifo.shift() : 0;
    if (a === FIFOLEVEL) return this.fifo.length;
    return this.regs[a];
  }
  write(a, v) {
    this.settle();
    const r = this.regs;
    if (a === FIFODATA) { if (this.fifo.length >= 64) r[ERROR] |= 0x10; else this.fifo.push(v); }
    else if (a === FIFOLEVEL) { if (v & 0x80) { this.fifo = []; r[ERROR] &= ~0x10; } }
    else if (a === COMIRQ || a === DIVIRQ) {
      if (v & 0x80) r[a] |= v & 0x7f; else r[a] &= ~v & 0x7f;
    } else if (a === COMMAND) this.command(v);
    else if (a === BITFRAMING) {
      r[a] = v;
      if (v & 0x80 && (r[COMMAND] & 0x0f) === 0x0c) this.transceive();
    } else if (a === TXCONTROL) {
      r[a] = v;
      if ((v & 3) === 0) for (const t of this.tags) { t.state = 0; t.level = 1; }
    } else if (!READ_ONLY.has(a)) r[a] = v;
  }
  command(v) {
    const cmd = v & 0x0f, r = this.regs;
    if (cmd === 0x0f) { this.reset(); return; }
    r[COMMAND] = v & 0x3f;
    if (cmd === 0x00) this.pending = null;
    if (cmd === 0x03) {
      const [lo, hi] = crcA(this.fifo, CRC_PRESETS[r[MODE] & 3]);
      this.fifo = []; r[CRC_L] = lo; r[CRC_H] = hi; r[DIVIRQ] |= 0x04; r[STATUS1] |= 0x20;
    }
  }
  timeoutNs() {
    const r = this.regs;
    const presc = ((r[TMODE] & 0x0f) << 8) | r[TPRESCALER];
    const reload = (r[TRELOAD_H] << 8) | r[TRELOAD_L];
    return (2 * presc + 1) * (reload + 1) * 1e9 / 13.56e6;
  }
  transceive() {
    const r = this.regs, last = r[BITFRAMING] & 7;
    r[ERROR] = 0; r[COLL] = 0x80; r[CONTROL] = 0x10;
    const frame = this.fifo; this.fifo = [];
    const txNs = (frame.length * 9 + (last || 0)) * BIT_NS;
    r[COMIRQ] |= 0x40;
    const timeout = this.timeoutNs();
    const answers = [];
    if ((r[TXCONTROL] & 3) === 3 && timeout >= FDT_NS) {
      for (const t of this.tags) { const a = t.respond(frame, last); if (a) answers.push(a); }
    }
    const t0 = this.now() + txNs;
    if (!answers.length) {
      this.pending = {at: t0 + timeout, apply: () => { if (r[TMODE] & 0x80) r[COMIRQ] |= 0x01; }};
      return;
    }
    let [data, rxLast] = answers[0];
    let err = 0;
    if (answers.length > 1) {
      const merged = data.slice(); let pos = 0;
      for (const [other] of answers.slice(1)) {
        for (let i = 0; i < Math.min(merged.length, other.length); i++) {
          const diff = merged[i] ^ other[i];
          if (diff && !pos) { let b = 0; while (!(diff & (1 << b))) b++; pos = i * 8 + b + 1; }
          merged[i] |= other[i];
        }
      }
      if (pos) { data = merged; err |= 0x08; r[COLL] = pos < 32 ? pos & 0x1f : 0; }
    }
    const at = t0 + FDT_NS + data.length * 9 * BIT_NS;
    this.pending = {at, apply: () => {
      this.fifo = data.slice(0, 64); r[CONTROL] = 0x10 | (rxLast & 7); r[ERROR] = err;
      r[COMIRQ] |= 0x20 | (err ? 0x02 : 0);
    }};
  }
}

module.exports = {MFRC522, Tag, crcA};
