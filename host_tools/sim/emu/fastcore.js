'use strict';
/**
 * Speed for the emulated Pico, same behaviour: two rewrites of rp2040js 1.4.1's hot paths.
 *
 * 1. The core's instruction dispatch. rp2040js decodes each Thumb instruction with one chain of
 *    ~80 `if (opcode >> k === pattern)` tests in alphabetical order of the mnemonic, so a load
 *    or a store is found after some 40 failed tests. install() rewrites
 *    CortexM0Core.prototype.executeInstruction from the library's own source: the same
 *    branches, each body unchanged, dealt into a `switch (opcode >> 8)`, so an instruction meets
 *    only the tests of its top byte, in the chain's order (the first branch that matches in the
 *    chain is still the one that runs). A branch whose test holds for every opcode of its top
 *    byte runs there without a test.
 * 2. Stores to SRAM. RP2040.writeUint32 looks the address up in its table of peripherals (an
 *    object keyed by address: a slow lookup) before it tries memory; no peripheral lives in
 *    SRAM, so a store there now goes to memory first.
 *
 * plan(src) returns the rewritten module's source, or null when the library's source does not
 * have the shape this expects (another rp2040js version): install() then leaves the core as it
 * is and says so on stderr. check() compares the chain's choice and the switch's on every
 * 16-bit opcode (tests/emu/test_fastcore.py runs it, and a run of random instructions on a core
 * of each kind). SHOE_EMU_CORE=library (rig.js) keeps the library as it is.
 */

const fs = require('fs');
const path = require('path');
const Module = require('module');

const CORE = path.join(path.dirname(require.resolve('rp2040js')), 'cortex-m0-core.js');
const HEAD = '        let deltaCycles = 1;\n';

function conjuncts(cond) {
  // a condition split at its top-level && (null if it has a top-level ||)
  const out = [];
  let depth = 0, start = 0;
  for (let i = 0; i < cond.length; i++) {
    const c = cond[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (depth === 0 && cond.startsWith('||', i)) return null;
    else if (depth === 0 && cond.startsWith('&&', i)) { out.push(cond.slice(start, i).trim()); start = i + 2; i++; }
  }
  out.push(cond.slice(start).trim());
  return out;
}

function parseChain(src) {
  // -> {before, branches: [{comment, cond, body}], fallback, after} of executeInstruction
  const m0 = src.indexOf('    executeInstruction() {\n');
  if (m0 < 0) return null;
  const h = src.indexOf(HEAD, m0);
  if (h < 0) return null;
  const lines = src.slice(h + HEAD.length).split('\n');
  const branches = [];
  let comment = [], cur = null, fallback = null, i = 0, expectElse = false;
  for (; i < lines.length; i++) {
    const line = lines[i];
    const ind = line.length - line.trimStart().length;
    const t = line.trim();
    if (ind > 8 || t === '') {
      if (!cur) return null;
      cur.body.push(line);
      continue;
    }
    if (ind !== 8) return null;
    if (t.startsWith('//')) { comment.push(line); continue; }
    if (t === '}') {
      if (!cur) return null;
      if (cur === fallback) { i++; break; }
      cur = null; expectElse = true;
      continue;
    }
    const mm = t.match(/^(else )?if \((.*)\) \{$/);
    if (mm && !!mm[1] === (branches.length > 0) && !cur) {
      cur = {comment, cond: mm[2], body: []};
      branches.push(cur); comment = [];
      continue;
    }
    if (t === 'else {' && expectElse && !cur) {
      cur = fallback = {comment, cond: null, body: []}; comment = [];
      continue;
    }
    return null;
  }
  if (!fallback || branches.length < 20) return null;
  return {before: src.slice(0, h + HEAD.length), branches, fallback, after: lines.slice(i).join('\n')};
}

function opcodeOnly(cond) {
  // the conjuncts of a test that read the first halfword only: every opcode it may accept
  const parts = conjuncts(cond);
  if (!parts) return null;
  const keep = parts.filter((p) => !/opcode2/.test(p));
  if (!keep.length) return null;
  for (const p of keep) if (!/^[\s()opcde0-9a-fA-Fxb>=!<&]+$/.test(p)) return null;
  return keep.join(' && ');
}

function table(branches) {
  // per top byte: the branches that may match it, in the chain's order, each marked `all` when
  // it matches every opcode of the byte (then nothing after it can run there)
  const tests = [];
  for (const b of branches) {
    const only = opcodeOnly(b.cond);
    if (only === null) return null;
    tests.push({
      may: new Function('opcode', 'return !!(' + only + ');'),
      full: /opcode2/.test(b.cond) ? null : new Function('opcode', 'return !!(' + b.cond + ');'),
    });
  }
  const buckets = [];
  for (let hi = 0; hi < 256; hi++) {
    const list = [];
    for (let k = 0; k < branches.length; k++) {
      let any = false, all = !!tests[k].full;
      for (let lo = 0; lo < 256; lo++) {
        const op = (hi << 8) | lo;
        if (tests[k].may(op)) any = true;
        if (all && !tests[k].full(op)) all = false;
      }
      if (!any) continue;
      list.push({k, all});
      if (all) break;
    }
    buckets.push(list);
  }
  return buckets;
}

function plan(src) {
  const chain = parseChain(src);
  if (!chain) return null;
  const buckets = table(chain.branches);
  if (!buckets) return null;
  const groups = new Map(); // one case group per distinct list of branches
  buckets.forEach((list, hi) => {
    const key = list.map((e) => e.k + (e.all ? '!' : '')).join(',');
    if (!groups.has(key)) groups.set(key, {list, his: []});
    groups.get(key).his.push(hi);
  });
  const out = ['        dispatch: {', '        switch (opcode >> 8) {'];
  for (const {list, his} of groups.values()) {
    if (!list.length) continue;
    out.push(his.map((hi) => '        case 0x' + hi.toString(16) + ':').join('\n'));
    out.push('        {');
    for (const {k, all} of list) {
      const b = chain.branches[k];
      out.push(...b.comment);
      out.push(all ? '        {' : '        if (' + b.cond + ') {');
      out.push(...b.body);
      out.push('        break dispatch;');
      out.push('        }');
    }
    out.push('        break;');
    out.push('        }');
  }
  out.push('        }');
  out.push(...chain.fallback.comment, ...chain.fallback.body);
  out.push('        }');
  return {source: chain.before + out.join('\n') + '\n' + chain.after, chain, buckets};
}

function load(source) {
  // the rewritten module compiled where the library's lives (its requires resolve the same)
  const m = new Module(CORE, module);
  m.filename = CORE;
  m.paths = Module._nodeModulePaths(path.dirname(CORE));
  m._compile(source, CORE);
  return m.exports.CortexM0Core.prototype.executeInstruction;
}

function install() {
  const {RP2040, RAM_START_ADDRESS} = require(path.join(path.dirname(CORE), 'rp2040.js'));
  const p = plan(fs.readFileSync(CORE, 'utf8'));
  if (!p || typeof RP2040.prototype.writeUint32 !== 'function' || RAM_START_ADDRESS !== 0x20000000) {
    process.stderr.write('rig: fastcore: rp2040js is not the version this expects; left as it is\n');
    return false;
  }
  const {CortexM0Core} = require(CORE);
  CortexM0Core.prototype.executeInstruction = load(p.source);
  const write32 = RP2040.prototype.writeUint32;
  RP2040.prototype.writeUint32 = function (address, value) {
    const off = (address >>> 0) - 0x20000000;
    if (off >= 0 && off + 3 < this.sram.length) {
      this.sramView.setUint32(off, value, true);
      return;
    }
    write32.call(this, address, value);
  };
  return true;
}

function check() {
  // the chain's choice and the switch's on every 16-bit opcode, with second halfwords that meet
  // each wide instruction's own tests and others: the same branch (or none) every time
  const p = plan(fs.readFileSync(CORE, 'utf8'));
  if (!p) return {ok: false, why: 'the library source is not of the expected shape'};
  const conds = p.chain.branches.map((b) => new Function('opcode', 'opcode2', 'return !!(' + b.cond + ');'));
  const seconds = [0, 0xffff, 0x8f40, 0x8f50, 0x8f60, 0x8000, 0x8800, 0xa000, 0xc000, 0xd000, 0xf000];
  for (let i = 0; i < 64; i++) seconds.push((i * 40503) & 0xffff);
  let compared = 0;
  for (let op = 0; op < 65536; op++) {
    for (const op2 of seconds) {
      let want = -1;
      for (let k = 0; k < conds.length; k++) if (conds[k](op, op2)) { want = k; break; }
      let got = -1;
      for (const {k, all} of p.buckets[op >> 8]) if (all || conds[k](op, op2)) { got = k; break; }
      compared++;
      if (want !== got) return {ok: false, why: `opcode ${op.toString(16)}/${op2.toString(16)}: chain ${want}, switch ${got}`};
    }
  }
  return {ok: true, compared, branches: conds.length};
}

module.exports = {install, plan, load, check, CORE};

if (require.main === module) console.log(JSON.stringify(check()));
