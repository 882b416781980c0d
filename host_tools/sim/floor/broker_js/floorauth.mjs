// The floor's MQTT users and topic ACL for the aedes broker: the same two files, the same grammar
// and the same rules as host_tools/floor/brokerauth.py (read_passwd, verify_password, Acl).
// tests/host_tools/floor/test_broker_acl.py runs one set of cases through both.
//   node floorauth.mjs check  < {"acl": TEXT, "queries": [[user, action, topic]...],
//                                "passwd": TEXT, "verify": [[password, hash]...]}
//   -> {"acl_error", "allows": [bool...], "passwd_error", "users": [...], "verify": [bool...]}
import { pbkdf2, timingSafeEqual } from 'node:crypto'
import { fileURLToPath } from 'node:url'

// Python's str.splitlines() boundaries and str.isspace() characters, so that strip() and
// split() cut a line exactly where brokerauth.py does
const LINES = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/
const WS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000'
const TRIM = new RegExp('^[' + WS + ']+|[' + WS + ']+$', 'g')
const SPLIT = new RegExp('[' + WS + ']+')
export const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/     // brokerauth._USER
// brokerauth._HASH: $7$ITERATIONS$SALT$DK, canonical base64
const B64 = '((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)'
const HASH = new RegExp('^\\$7\\$([0-9]{1,8})\\$' + B64 + '\\$' + B64 + '$')
const MAX_ITERATIONS = 10000000

function lines (text) {
  return text.split(LINES).map((l) => l.replace(TRIM, ''))
}

export function parsePasswd (text, name = 'passwd') {
  const users = new Map()
  lines(text).forEach((line, i) => {
    if (!line || line.startsWith('#')) return
    const at = line.indexOf(':')
    const h = at < 0 ? '' : line.slice(at + 1)
    if (at < 0 || !h.startsWith('$7$')) {
      throw new Error(name + ' line ' + (i + 1) + ': not `user:$7$...`')
    }
    users.set(line.slice(0, at), h)
  })
  return users
}

function pbkdf2Async (password, salt, iterations) {
  return new Promise((resolve, reject) => {
    pbkdf2(password, salt, iterations, 64, 'sha512', (err, dk) => err ? reject(err) : resolve(dk))
  })
}

// A dummy hash for unknown users: the same work as a real check, so timing does not tell
// which user names exist
const DUMMY = '$7$101$AAAAAAAAAAAAAAAA$' + 'A'.repeat(86) + '=='

export async function verifyPassword (password, hashed) {
  const m = HASH.exec(typeof hashed === 'string' ? hashed : '')
  if (!m) return false
  const iterations = Number(m[1])
  if (iterations < 1 || iterations > MAX_ITERATIONS) return false
  const want = Buffer.from(m[3], 'base64')
  const got = await pbkdf2Async(Buffer.from(password || ''), Buffer.from(m[2], 'base64'),
    iterations)
  return want.length === got.length && timingSafeEqual(got, want)
}

export async function login (users, username, password) {
  const h = typeof username === 'string' ? users.get(username) : undefined
  const ok = await verifyPassword(password, h || DUMMY)
  return Boolean(h) && ok
}

// ---- the ACL (brokerauth.Acl) --------------------------------------------------------------
function matches (pattern, topic) {
  const p = pattern.split('/'); const t = topic.split('/')
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '#') return true
    if (i >= t.length || (p[i] !== '+' && p[i] !== t[i])) return false
  }
  return p.length === t.length
}

function covers (pattern, sub) {
  const p = pattern.split('/'); const s = sub.split('/')
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '#') return true
    if (i >= s.length || s[i] === '#') return false
    if (p[i] === '+') continue
    if (s[i] === '+' || s[i] !== p[i]) return false
  }
  return p.length === s.length
}

export class Acl {
  constructor (rules) {
    this.rules = rules || new Map()     // user -> [[access, pattern]]
  }

  static parse (text) {
    const rules = new Map()
    let user = null
    lines(text).forEach((line, i) => {
      if (!line || line.startsWith('#')) return
      const words = line.split(SPLIT)
      if (words[0] === 'user' && words.length === 2) {
        if (!USER_NAME.test(words[1])) {
          throw new Error('MQTT user names are 1-64 of A-Z a-z 0-9 . _ - : ' + words[1])
        }
        user = words[1]
        if (!rules.has(user)) rules.set(user, [])
      } else if (words[0] === 'topic' && user && words.length === 3 &&
                 ['read', 'write', 'readwrite'].includes(words[1])) {
        rules.get(user).push([words[1], words[2]])
      } else {
        throw new Error('ACL line ' + (i + 1) + ' not understood (only `user NAME` and `topic ' +
                        'read|write|readwrite TOPIC` under a user): ' + line)
      }
    })
    return new Acl(rules)
  }

  // action: "write" (publish), "read" (receive a message on topic), "subscribe" (a filter)
  allows (user, action, topic) {
    if (!user || !topic || topic.startsWith('$')) return false
    for (const [access, pattern] of this.rules.get(user) || []) {
      if (action === 'write' && (access === 'write' || access === 'readwrite') &&
          matches(pattern, topic)) return true
      if (action === 'read' && (access === 'read' || access === 'readwrite') &&
          matches(pattern, topic)) return true
      if (action === 'subscribe' && (access === 'read' || access === 'readwrite') &&
          covers(pattern, topic)) return true
    }
    return false
  }
}

// ---- `node floorauth.mjs check`: the shared test cases ---------------------------------------
async function check () {
  let input = ''
  for await (const chunk of process.stdin) input += chunk
  const q = JSON.parse(input)
  const out = { acl_error: null, allows: [], passwd_error: null, users: [], verify: [] }
  try {
    const acl = Acl.parse(q.acl || '')
    out.allows = (q.queries || []).map(([u, a, t]) => acl.allows(u, a, t))
  } catch (e) {
    out.acl_error = e.message
  }
  try {
    out.users = [...parsePasswd(q.passwd || '').keys()]
  } catch (e) {
    out.passwd_error = e.message
  }
  for (const [pw, h] of q.verify || []) out.verify.push(await verifyPassword(pw, h))
  process.stdout.write(JSON.stringify(out) + '\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'check') {
  await check()
}
