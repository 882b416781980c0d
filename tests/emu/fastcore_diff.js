'use strict';
// Every 16-bit opcode (a random second halfword for the wide ones) run once on the library's
// executeInstruction and once on fastcore's, from the same random core state and the same
// memory (a sparse memory of random words, every access logged): registers, flags, the
// exception and interrupt state, the cycles and the memory accesses must be the same.
// Usage: node fastcore_diff.js [seed] -> one JSON line {ok, ran, why?}
const path = require('path');
const emu = path.join(__dirname, '..', '..', 'host_tools', 'sim', 'emu');
const fc = require(path.join(emu, 'fastcore.js'));
const fs = require('fs');
const {RP2040} = require(require.resolve('rp2040js', {paths: [emu]}));
const {CortexM0Core} = require(fc.CORE);

const library = CortexM0Core.prototype.executeInstruction;
const fast = fc.load(fc.plan(fs.readFileSync(fc.CORE, 'utf8')).source);

let seed = (+process.argv[2] || 1) >>> 0;
function rand() { // xorshift32
  seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0;
  return seed;
}

const mcu = new RP2040();
mcu.logger = {debug() {}, info() {}, warn() {}, error() {}};
const core = mcu.core;
let mem, log;
function word(a) {
  a = (a >>> 0) & ~3;
  if (!mem.has(a)) mem.set(a, Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) >>> 0);
  return mem.get(a);
}
core.readUint32 = (a) => { log.push('r4', a >>> 0); return word(a); };
core.readUint16 = (a) => { log.push('r2', a >>> 0); return (word(a) >>> ((a & 2) * 8)) & 0xffff; };
core.readUint8 = (a) => { log.push('r1', a >>> 0); return (word(a) >>> ((a & 3) * 8)) & 0xff; };
core.writeUint32 = (a, v) => { log.push('w4', a >>> 0, v >>> 0); mem.set((a >>> 0) & ~3, v >>> 0); };
core.writeUint16 = (a, v) => { log.push('w2', a >>> 0, v & 0xffff); };
core.writeUint8 = (a, v) => { log.push('w1', a >>> 0, v & 0xff); };

const FIELDS = ['N', 'Z', 'C', 'V', 'PM', 'SPSEL', 'nPRIV', 'currentMode', 'IPSR', 'bankedSP',
  'waiting', 'eventRegistered', 'pendingInterrupts', 'pendingSVCall', 'pendingPendSV',
  'pendingNMI', 'pendingSystick', 'cycles', 'breakRewind'];

function state(cycles) {
  return JSON.stringify({r: Array.from(core.registers), f: FIELDS.map((k) => core[k]), cycles, log});
}

function setup(opcode, opcode2, regs, flags) {
  mem = new Map();
  log = [];
  const pc = 0x20001000;
  mem.set(pc, (opcode | (opcode2 << 16)) >>> 0);
  core.registers.set(regs);
  core.registers[15] = pc;
  [core.N, core.Z, core.C, core.V] = flags;
  core.PM = false; core.SPSEL = 0; core.nPRIV = false; core.currentMode = 0; core.IPSR = 0;
  core.bankedSP = 0x20040000; core.waiting = false; core.eventRegistered = false;
  core.pendingInterrupts = 0; core.pendingSVCall = false; core.pendingPendSV = false;
  core.pendingNMI = false; core.pendingSystick = false; core.cycles = 0; core.breakRewind = 0;
  core.interruptsUpdated = false;
  core.onBreak = () => { log.push('break'); };
}

let ran = 0;
for (let opcode = 0; opcode < 65536; opcode++) {
  const opcode2 = rand() & 0xffff;
  const regs = [];
  for (let i = 0; i < 15; i++) regs.push(rand() & 1 ? 0x20000000 + (rand() & 0x3fffc) : rand());
  regs[13] = 0x20030000 + (rand() & 0xff0);
  const flags = [rand() & 1, rand() & 1, rand() & 1, rand() & 1].map(Boolean);
  const out = [];
  for (const f of [library, fast]) {
    setup(opcode, opcode2, regs, flags);
    let c;
    try { c = f.call(core); } catch (e) { c = 'threw ' + e.message; }
    out.push(state(c));
  }
  ran++;
  if (out[0] !== out[1]) {
    console.log(JSON.stringify({ok: false, ran, why: `opcode ${opcode.toString(16)}/${opcode2.toString(16)}`, library: out[0], fast: out[1]}));
    process.exit(0);
  }
}
console.log(JSON.stringify({ok: true, ran}));
