// Package eventhubfake is a local stand-in for Azure Event Hubs, for tests:
// a TLS listener on 127.0.0.1 speaking the part of AMQP 1.0 that Azure's
// Go SDK (azeventhubs) uses to publish events.
//
// It answers the SASL and AMQP protocol headers, the SASL ANONYMOUS (or
// MSSBCBS) exchange, and the open, begin, attach, flow, transfer,
// disposition, detach, end and close performatives. Authorization is
// claims-based as on the real service: the client puts a token on the
// $cbs node (operation put-token, type servicebus.windows.net:sastoken or
// jwt, name the audience) and the fake answers on the client's reply link
// with status-code 202, or 401 when a SAS token's HMAC-SHA256 signature
// does not verify against the configured key, or a JWT is neither the one
// configured nor one of the bearer tokens (an Entra fake's) it trusts. A
// sender link to an event hub is refused (amqp:unauthorized-access)
// unless a token for its audience was accepted on the connection.
// Each message the hub receives is recorded, batch envelopes opened into
// their events, with body and properties, for tests to assert.
//
// The AMQP 1.0 type system is encoded and decoded here (codec.go): the
// subset the SDK sends, written for this fake, never a copy of go-amqp's.
package eventhubfake
