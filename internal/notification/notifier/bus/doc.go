// Package bus publishes events to message buses and tracing backends, the
// Provider types whose service takes the event itself rather than a chat
// message or an API call about it: nats (the event JSON on a subject),
// googlepubsub (the event JSON on a topic, the Secret's headers as message
// attributes), azureeventhub (the event JSON in one AMQP message to an
// event hub, through Azure's SDK, authorized by a SAS connection string or
// a JWT put on the namespace's $cbs node) and otel (one OTLP span per
// event, over HTTP, placed in a trace under the span of the Kustomization
// or source the object hangs from, which it reads from the API server as
// Flux does).
//
// Each delivery opens its own connection and closes it when the event is
// taken, as Flux's notification-controller does: the event server builds a
// Notifier per delivery and holds no state between events. The cost is a
// connection set-up per event (a TCP connect and the NATS handshake, a gRPC
// dial to Pub/Sub, an AMQP connection and claim to Event Hubs, an HTTP
// connection to the collector), small next to the rate at which Flux's
// controllers emit events.
package bus
