// The aedes MQTT broker for the floor (host_tools/floor/aedes.py starts it):
//   node broker.mjs PORT [HOST]   prints "ready mqtt://HOST:PORT" once listening; SIGTERM stops.
// In-memory persistence (aedes' default): QoS 1 sessions live as long as the process, as with
// amqtt; after a restart the floor recovers by replay from the gateways' stores.
import net from 'node:net'
import { Aedes } from 'aedes'

const port = Number(process.argv[2] || 1883)
const host = process.argv[3] || '127.0.0.1'

const aedes = await Aedes.createBroker({ concurrency: 1000, queueLimit: 100000 })
aedes.on('clientError', () => {})       // a client that drops (killed collector) is not news
aedes.on('connectionError', () => {})
const server = net.createServer(aedes.handle)
server.on('error', (e) => { console.error('aedes: ' + e.message); process.exit(2) })
server.listen(port, host, () => { console.log('ready mqtt://' + host + ':' + port) })

function stop () {
  server.close()
  aedes.close(() => process.exit(0))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
