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
 * layout) or {uid, pages: hex}: Type 2 tags (NTAG21x); or an NTAG 424 DNA (ISO 14443-4), the
 * spec() of host_tools/sim/ntag424.py: {uid, ndef: hex of file 2, ctr, sdm: {options, uid_at,
 * ctr_at, mac_in, mac_at, key}} (a copy: {uid, ndef} without sdm, answering what it recorded).
 * See IsoTag below; its AES (CMAC, SDMMAC) is node's, independent of the firmware's.
 */
const crypto = require('crypto');
const fs = require('fs');
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
  static get ATQA() { return [0x44, 0x00]; }
  static get SAK() { return 0x00; }
  constructor(uid, pages, npages = 45) {
    this.uid = uid;
    this.mem = new Array(npages * 4).fill(0);
    pages.forEach((v, i) => { if (i < this.mem.length) this.mem[i] = v; });
    this.state = 0; this.level = 1; // 0 idle 1 ready 2 active 3 halt
  }
  static fromSpec(s, reg) {
    if (s.ndef !== undefined) return new IsoTag(s, reg);
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
  respond(f, last, now) {
    if (last === 7 && f.length === 1 && (f[0] === 0x26 || f[0] === 0x52)) {
      if (f[0] === 0x26 && this.state === 3) return null;
      if (this.state === 0 || this.state === 3 || f[0] === 0x52) {
        this.state = 1; this.level = 1;
        return [this.uid.length === 7 ? this.constructor.ATQA : [0x04, 0], 0];
      }
      return null;
    }
    if (last !== 0) return null;
    if (this.state === 1) {
      const sel = this.level === 1 ? 0x93 : 0x95;
      if (f.length === 2 && f[0] === sel && f[1] === 0x20) {
        // its whole UID goes on the air at its last level: what a reader that knows the tag
        // reports it by (the shoe's plain tags read whole before: MFRC522.field's `unchecked`)
        if (this.uid.length === 4 || this.level === 2) this.named = true;
        return [this.cl(this.level), 0];
      }
      if (f.length === 9 && f[0] === sel && f[1] === 0x70) {
        const c = crcA(f.slice(0, 7));
        const want = this.cl(this.level);
        if (c[0] !== f[7] || c[1] !== f[8] || want.some((v, i) => v !== f[2 + i])) {
          this.state = 0; return null;
        }
        let sak = this.constructor.SAK;
        if (this.uid.length === 7 && this.level === 1) { this.level = 2; sak = 0x04; }
        else this.state = 2;
        return [withCrc([sak]), 0];
      }
      this.state = 0; return null;
    }
    if (this.state === 2) return this.active(f, now);
    return null;
  }
  active(f) {  // selected (ISO 14443-3 ACTIVE): the Type 2 commands
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
      this.served = true;   // its memory went on the air (MFRC522.field)
      return [withCrc(data), 0];
    }
    this.state = 0; return null;
  }
}

// AES-128 for the tag model (node's OpenSSL): ECB of one block, CBC from a zero IV, CMAC.
const aesEcb = (key, block) => {
  const c = crypto.createCipheriv('aes-128-ecb', key, null); c.setAutoPadding(false);
  return Buffer.concat([c.update(block), c.final()]);
};
const aesCbc = (key, data) => {
  const c = crypto.createCipheriv('aes-128-cbc', key, Buffer.alloc(16)); c.setAutoPadding(false);
  return Buffer.concat([c.update(data), c.final()]);
};
function dbl(b) {
  const out = Buffer.alloc(16); let carry = 0;
  for (let i = 15; i >= 0; i--) { out[i] = ((b[i] << 1) | carry) & 0xff; carry = b[i] >> 7; }
  if (b[0] & 0x80) out[15] ^= 0x87;
  return out;
}
function cmac(key, msg) {
  const k1 = dbl(aesEcb(key, Buffer.alloc(16))), k2 = dbl(k1);
  const n = msg.length, r = n % 16;
  let last, head;
  if (n && !r) { head = msg.subarray(0, n - 16); last = Buffer.from(msg.subarray(n - 16)); for (let i = 0; i < 16; i++) last[i] ^= k1[i]; }
  else {
    head = msg.subarray(0, n - r); last = Buffer.alloc(16); msg.copy(last, 0, n - r); last[r] = 0x80;
    for (let i = 0; i < 16; i++) last[i] ^= k2[i];
  }
  const out = aesCbc(key, Buffer.concat([head, last]));
  return out.subarray(out.length - 16);
}
const hexUp = (b) => Buffer.from(Buffer.from(b).toString('hex').toUpperCase(), 'latin1');

/*
 * An NTAG 424 DNA in the field (NT4H2421Gx): ISO 14443-3 with ATQA 0344 / SAK 20, then RATS ->
 * ATS 06 77 77 71 02 80 (FSC 128, FWI 7, SFGI 1: a block sooner than 604 us after the ATS is
 * not heard), ISO 14443-4 blocks (block numbers, R(ACK)/R(NAK), S(DESELECT) -> HALT), and the
 * APDUs the shoe sends: ISOSelectFile of the NDEF application, ISOReadBinary with Secure Dynamic
 * Messaging on file 2 (UID and SDMReadCtr mirrored in ASCII, SDMMAC over mac_in..mac_at under
 * the session key of SV2; the counter one more before the first read after another command).
 * The tag's processing times are assumptions (not measured on real parts): 0.3 ms for the ATS,
 * 0.5 ms for SELECT, 3 ms for an SDM read (its counter goes to EEPROM first), on top of the
 * frame delay. Its counter is kept by UID across presentations (reg: the rig's tag registry).
 */
class IsoTag extends Tag {
  static get ATQA() { return [0x44, 0x03]; }
  static get SAK() { return 0x20; }
  constructor(s, reg) {
    super(Array.from(Buffer.from(s.uid, 'hex')), []);
    this.file = Buffer.alloc(256); Buffer.from(s.ndef, 'hex').copy(this.file);
    this.sdm = s.sdm ? Object.assign({}, s.sdm) : null;
    this.key = this.sdm && this.sdm.key ? Buffer.from(this.sdm.key, 'hex') : null;
    this.reg = reg || {get: () => undefined, set: () => {}};
    this.id = s.uid.toLowerCase() + (this.key ? ':' + s.sdm.key : ':copy');
    const kept = this.reg.get(this.id);
    this.ctr = Math.max(s.ctr || 0, kept === undefined ? 0 : kept);
    this.bn = 1; this.lastBlk = null; this.readyAt = 0; this.lastCmd = null; this.app = false;
  }
  active(f, now) {
    if (f.length === 4 && f[0] === 0x50 && f[1] === 0) return super.active(f);
    const c = crcA(f.slice(0, 2));
    if (f.length === 4 && f[0] === 0xe0 && c[0] === f[2] && c[1] === f[3]) {
      this.state = 4; this.bn = 1; this.lastBlk = null; this.app = false; this.lastCmd = null;
      const ats = [0x06, 0x77, 0x77, 0x71, 0x02, 0x80];
      // the SFGT runs from the end of the ATS: it is sent after FDT + 0.3 ms, 8 bytes long
      this.readyAt = now + 86e3 + 0.3e6 + 8 * 9 * BIT_NS + 604e3;
      return [withCrc(ats), 0, 0.3e6];
    }
    this.state = 0; return null;
  }
  respond(f, last, now) {
    if (this.state !== 4) return super.respond(f, last, now);
    if (last !== 0 || f.length < 3) return null;
    const c = crcA(f.slice(0, f.length - 2));
    if (c[0] !== f[f.length - 2] || c[1] !== f[f.length - 1]) return null;
    if (now < this.readyAt) return null;        // inside the SFGT: not listening yet
    return this.block(f.slice(0, f.length - 2));
  }
  send(blk, proc) { this.lastBlk = blk; return [withCrc(blk), 0, proc || 0]; }
  block(b) {
    const pcb = b[0];
    if (pcb === 0xc2 && b.length === 1) { this.state = 3; return [withCrc([0xc2]), 0, 0]; }
    if ((pcb & 0xe2) === 0x02 && !(pcb & 0x1c)) {
      this.bn ^= 1;
      const [resp, proc] = this.apdu(Buffer.from(b.slice(1)));
      return this.send([0x02 | this.bn].concat(Array.from(resp)), proc);
    }
    if ((pcb & 0xe6) === 0xa2 && b.length === 1) {
      if ((pcb & 1) === this.bn && this.lastBlk) return this.send(this.lastBlk);
      if (pcb & 0x10) return this.send([0xa2 | this.bn]);
      return null;
    }
    return null;
  }
  apdu(a) {
    const ok = Buffer.from([0x90, 0x00]);
    let cmd = null, out;
    if (a[0] === 0x00 && a[1] === 0xa4 && a[2] === 0x04 && a[4] === 7
        && a.subarray(5, 12).equals(Buffer.from('d2760000850101', 'hex'))) {
      this.app = true; out = [ok, 0.5e6];
    } else if (a.length === 5 && a[0] === 0x00 && a[1] === 0xb0 && (a[2] & 0x80)) {
      cmd = 'B0' + a[2];
      if (!this.app || (a[2] & 0x1f) !== 2) out = [Buffer.from([0x6a, 0x82]), 0];
      else {
        const data = this.dynamic(this.lastCmd !== cmd);
        const n = a[4] || 256;
        this.served = true;
        out = [Buffer.concat([data.subarray(a[3], a[3] + n), ok]), this.sdm ? 3e6 : 0.5e6];
      }
    } else out = [Buffer.from([0x6d, 0x00]), 0];
    this.lastCmd = cmd;
    return out;
  }
  dynamic(first) {
    const f = Buffer.from(this.file), s = this.sdm;
    if (!s) return f;
    if (first && (s.options & 0x40)) { this.ctr += 1; this.reg.set(this.id, this.ctr); }
    const uid = Buffer.from(this.uid), ctr = Buffer.from([this.ctr >> 16 & 255, this.ctr >> 8 & 255, this.ctr & 255]);
    if (s.uid_at !== null && s.uid_at !== undefined) hexUp(uid).copy(f, s.uid_at);
    if (s.ctr_at !== null && s.ctr_at !== undefined && s.ctr_at !== 0xffffff) hexUp(ctr).copy(f, s.ctr_at);
    if (this.key) {
      let sv2 = Buffer.from('3cc300010080', 'hex');
      if (s.options & 0x80) sv2 = Buffer.concat([sv2, uid]);
      if (s.options & 0x40) sv2 = Buffer.concat([sv2, Buffer.from(ctr).reverse()]);
      sv2 = Buffer.concat([sv2, Buffer.alloc((16 - sv2.length % 16) % 16)]);
      const mac = cmac(cmac(this.key, sv2), f.subarray(s.mac_in, s.mac_at));
      const t = Buffer.from([1, 3, 5, 7, 9, 11, 13, 15].map((i) => mac[i]));
      hexUp(t).copy(f, s.mac_at);
    }
    return f;
  }
}

class MFRC522 {
  constructor(now, store) {
    this.now = now; this.tags = []; this.pending = null; this.transfers = 0;
    // each tag put in the field (a card passing): when it first answered the reader, in
    // emulated ns after it came; a tag that left unheard, or before its whole UID or its memory
    // was read, is a card the shoe cannot have read (unheard_at, unread_at: when such tags
    // came, the first 8); one whose UID went on the air but not its memory could be reported
    // by its UID but not checked (unchecked, unchecked_at)
    this.field = {cards: 0, heard: 0, unheard: 0, unread: 0, unchecked: 0, max_ns: 0, sum_ns: 0,
      worst_at: 0, unheard_at: [], unread_at: [], unchecked_at: []};
    this.placedAt = null; this.heardAt = null;
    // the longest waits between two REQA/WUPA polls while cards pass (within 1 s of a tag put
    // in the field): the reader busy elsewhere. Emulated ns, each with the time it ended; the
    // five longest of the run
    this.polls = {count: 0, last: null, gaps: []};
    this.lastPlaced = null;
    this.reset(); this.cs = false;
    // NTAG 424 DNA read counters by tag: they live in the tags (their EEPROM), not in the
    // shoe, so they outlast a power cut of the rig (store: a JSON file in its state dir)
    this.store = store; this.counters = {};
    if (store && fs.existsSync(store)) {
      try { this.counters = JSON.parse(fs.readFileSync(store, 'utf8')); } catch (e) { this.counters = {}; }
    }
    const self = this;
    this.reg = {get: (k) => self.counters[k],
      set: (k, v) => { self.counters[k] = v; if (self.store) fs.writeFileSync(self.store, JSON.stringify(self.counters)); }};
  }
  reset() {
    const r = this.regs = new Uint8Array(64);
    r[COMMAND] = 0x20; r[COMIEN] = 0x80; r[COMIRQ] = 0x14; r[STATUS1] = 0x21;
    r[CONTROL] = 0x10; r[MODE] = 0x3f; r[TXCONTROL] = 0x80; r[VERSION] = 0x92;
    this.fifo = []; this.pending = null;
  }
  setTags(specs) {
    const f = this.field;
    if (this.placedAt !== null && this.heardAt === null) {
      f.unheard++; if (f.unheard_at.length < 8) f.unheard_at.push(this.placedAt);
    } else if (this.placedAt !== null && !this.tags.some((t) => t.served)) {
      if (this.tags.some((t) => t.named)) {   // its UID, not its memory: reported by UID only
        f.unchecked++; if (f.unchecked_at.length < 8) f.unchecked_at.push(this.placedAt);
      } else {
        f.unread++; if (f.unread_at.length < 8) f.unread_at.push(this.placedAt);
      }
    }
    this.placedAt = specs.length ? this.now() : null; this.heardAt = null;
    if (specs.length) { this.field.cards++; this.lastPlaced = this.placedAt; }
    for (const t of this.tags) { t.state = 0; t.level = 1; }
    this.tags = specs.map((sp) => Tag.fromSpec(sp, this.reg));
  }
  poll(t) {
    const p = this.polls;
    p.count++;
    if (p.last !== null && this.lastPlaced !== null && t - this.lastPlaced < 1e9) {
      const gap = t - p.last, g = p.gaps;
      if (g.length < 5 || gap > g[g.length - 1][0]) {
        g.push([gap, t]); g.sort((a, b) => b[0] - a[0]); if (g.length > 5) g.pop();
      }
    }
    p.last = t;
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
    const t0 = this.now() + txNs;
    if ((r[TXCONTROL] & 3) === 3 && timeout >= FDT_NS) {
      for (const t of this.tags) { const a = t.respond(frame, last, t0); if (a) answers.push(a); }
    }
    if (last === 7 && frame.length === 1) this.poll(t0);
    if (answers.length && this.placedAt !== null && this.heardAt === null) {
      this.heardAt = t0;
      const f = this.field, d = t0 - this.placedAt;
      f.heard++; f.sum_ns += d; if (d > f.max_ns) { f.max_ns = d; f.worst_at = this.placedAt; }
    }
    if (!answers.length) {
      this.pending = {at: t0 + timeout, apply: () => { if (r[TMODE] & 0x80) r[COMIRQ] |= 0x01; }};
      return;
    }
    let [data, rxLast, proc] = answers[0];
    proc = proc || 0;
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
    if (FDT_NS + proc > timeout) {   // the tag thinks longer than the timer waits
      this.pending = {at: t0 + timeout, apply: () => { if (r[TMODE] & 0x80) r[COMIRQ] |= 0x01; }};
      return;
    }
    const at = t0 + FDT_NS + proc + data.length * 9 * BIT_NS;
    this.pending = {at, apply: () => {
      this.fifo = data.slice(0, 64); r[CONTROL] = 0x10 | (rxLast & 7); r[ERROR] = err;
      r[COMIRQ] |= 0x20 | (err ? 0x02 : 0);
    }};
  }
}

module.exports = {MFRC522, Tag, IsoTag, crcA, cmac};
