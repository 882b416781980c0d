// The aedes MQTT broker for the floor (host_tools/sim/floor/aedes.py starts it):
//   node broker.mjs PORT [HOST] [--passwd FILE --acl FILE]
//                   [--cert FILE --key FILE [--ca FILE [--require-certificate]]]
// prints "ready mqtt://HOST:PORT" (mqtts with --cert) once listening, or "error REASON" and
// exits 2; SIGTERM stops. --cert/--key: TLS only. --require-certificate: a client certificate
// from --ca is required and its CN is the user the ACL applies to, with no password (Mosquitto's
// require_certificate + use_identity_as_username, which floor-broker-config writes). With --passwd/--acl (the files `shoectl floor-broker-config` writes,
// the same Mosquitto reads) only those users get in and the ACL decides, deny by default, as
// amqtt's FloorAuth/FloorTopics do: a refused subscription gets SUBACK 0x80, a refused publish is
// acknowledged and dropped (the client stays connected), a message is delivered only to users
// that may read its topic. Refusals go to stderr (at most 20 lines per 10 s).
// In-memory persistence (aedes' default): QoS 1 sessions live as long as the process, as with
// amqtt; after a restart the floor recovers by replay from the gateways' stores.
import fs from 'node:fs'
import net from 'node:net'
import tls from 'node:tls'
import { Aedes } from 'aedes'
import { Acl, login, parsePasswd, USER_NAME } from './floorauth.mjs'

function fail (msg) {
  console.log('error ' + msg)
  process.exit(2)
}

const pos = []
const opt = {}
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]
  if (a === '--require-certificate') {
    opt.requireCertificate = true
  } else if (['--passwd', '--acl', '--cert', '--key', '--ca'].includes(a)) {
    if (i + 1 >= process.argv.length) fail(a + ' needs a file')
    opt[a.slice(2)] = process.argv[++i]
  } else if (a.startsWith('--')) {
    fail('unknown option ' + a)
  } else {
    pos.push(a)
  }
}
const port = Number(pos[0] || 1883)
const host = pos[1] || '127.0.0.1'
if (!Number.isInteger(port) || port < 0 || port > 65535) fail('bad port ' + pos[0])
if (Boolean(opt.passwd) !== Boolean(opt.acl)) fail('--passwd and --acl go together')
if (Boolean(opt.cert) !== Boolean(opt.key)) fail('--cert and --key go together')
if (opt.ca && !opt.cert) fail('--ca needs --cert and --key')
if (opt.requireCertificate && !(opt.ca && opt.acl)) {
  fail('--require-certificate needs --ca and --passwd/--acl')
}

function read (f) {
  try {
    return fs.readFileSync(f, 'utf8')
  } catch (e) {
    fail('cannot read ' + f + ': ' + e.message)
  }
}

let users = null
let acl = null
if (opt.passwd) {
  try {
    users = parsePasswd(read(opt.passwd), opt.passwd)
    acl = Acl.parse(read(opt.acl))
  } catch (e) {
    fail(e.message)
  }
}

// ---- refusals on stderr, rate-limited ---------------------------------------------------------
let logged = 0
let skipped = 0
setInterval(() => {
  if (skipped) console.error('aedes: ' + skipped + ' more refusals not shown')
  logged = 0
  skipped = 0
}, 10000).unref()
function refused (what) {
  if (logged++ < 20) console.error('aedes: refused ' + what)
  else skipped++
}

const USER = Symbol('floor user')
const hooks = {}
if (users) {
  hooks.authenticate = (client, username, password, done) => {
    if (opt.requireCertificate) {
      // the TLS handshake already refused a client without a certificate from --ca
      const cert = client.conn.authorized ? client.conn.getPeerCertificate() : null
      const cn = cert && cert.subject && cert.subject.CN
      if (typeof cn === 'string' && USER_NAME.test(cn)) {
        client[USER] = cn
        return done(null, true)
      }
      refused('certificate without a user name in its CN (client ' + JSON.stringify(client.id) +
              ')')
      return done(null, false)
    }
    login(users, username, password).then((ok) => {
      if (ok) client[USER] = username
      else refused('login ' + JSON.stringify(username || null) + ' (client ' +
                   JSON.stringify(client.id) + ')')
      done(null, ok)
    }, () => done(null, false))
  }
  const dropped = new WeakSet()
  hooks.authorizePublish = (client, packet, done) => {
    // a will of a client that is gone has no client: its user is unknown, drop it
    if (!client || !acl.allows(client[USER], 'write', packet.topic)) {
      if (client) refused('publish by ' + client[USER] + ' on ' + JSON.stringify(packet.topic))
      dropped.add(packet)
    }
    done(null)
  }
  hooks.authorizeSubscribe = (client, sub, done) => {
    if (acl.allows(client[USER], 'subscribe', sub.topic)) return done(null, sub)
    refused('subscription by ' + client[USER] + ' to ' + JSON.stringify(sub.topic))
    done(null, null)          // SUBACK 0x80
  }
  hooks.authorizeForward = (client, packet) =>
    acl.allows(client[USER], 'read', packet.topic) ? packet : null
  hooks.dropped = dropped
}

const aedes = await Aedes.createBroker({
  concurrency: 1000,
  queueLimit: 100000,
  ...(users ? {
    authenticate: hooks.authenticate,
    authorizePublish: hooks.authorizePublish,
    authorizeSubscribe: hooks.authorizeSubscribe,
    authorizeForward: hooks.authorizeForward
  } : {})
})
if (users) {
  // A refused publish is acknowledged (aedes writes the PUBACK before publishing) but goes
  // nowhere and is not retained, and the client stays connected: amqtt's behaviour
  const publish = aedes.publish.bind(aedes)
  aedes.publish = (packet, client, done) => {
    if (typeof client === 'function') {
      done = client
      client = null
    }
    if (hooks.dropped.has(packet)) return (done || (() => {}))()
    return publish(packet, client, done)
  }
}
aedes.on('clientError', () => {})       // a client that drops (killed collector) is not news
aedes.on('connectionError', () => {})

let server
if (opt.cert) {
  try {
    server = tls.createServer({
      cert: read(opt.cert),
      key: read(opt.key),
      ...(opt.ca ? { ca: read(opt.ca) } : {}),
      ...(opt.requireCertificate ? { requestCert: true, rejectUnauthorized: true } : {})
    }, aedes.handle)
  } catch (e) {
    fail('TLS: ' + e.message)
  }
} else {
  server = net.createServer(aedes.handle)
}
server.on('error', (e) => fail(e.message))
server.listen(port, host, () => {
  console.log('ready ' + (opt.cert ? 'mqtts' : 'mqtt') + '://' + host + ':' + server.address().port)
})

function stop () {
  server.close()
  aedes.close(() => process.exit(0))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
