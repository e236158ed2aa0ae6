package eventhubfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxMessageSize is the largest message the fake's hubs take, Event Hubs
// Standard tier's.
const maxMessageSize = uint64(1 << 20)

// Token types of put-token.
const (
	TokenTypeSAS = "servicebus.windows.net:sastoken"
	TokenTypeJWT = "jwt"
)

// attach answers a client's attach with the mirror link. A sender to an
// event hub whose audience holds no accepted token is refused as Event
// Hubs does: an attach without target, then a detach with
// amqp:unauthorized-access.
func (c *conn) attach(f frame) error {
	s := c.sessions[f.channel]
	if s == nil {
		return errors.New("amqp: attach on a session never begun")
	}
	h, _ := f.field(1).(uint32)
	role, _ := f.field(2).(bool)
	l := &link{handle: h, clientSends: !role, source: address(f.field(5)), target: address(f.field(6))}
	var initialCount any
	if role {
		initialCount = uint32(0)
	}
	refuse := l.clientSends && l.target != cbsNode && l.target != managementNode && !c.authorized[hubOf(l.target)]
	target := f.field(6)
	if refuse {
		target = nil
	}
	reply := performative(codeAttach, f.field(0), h, !role, f.field(3), f.field(4), f.field(5), target,
		nil, nil, initialCount, maxMessageSize)
	if err := c.send(f.channel, reply); err != nil {
		return err
	}
	if refuse {
		e := performative(codeError, Symbol("amqp:unauthorized-access"),
			fmt.Sprintf("Unauthorized access. 'Send' claim(s) are required to perform this operation. Resource: '%s'.",
				l.target))
		return c.send(f.channel, performative(codeDetach, h, true, e))
	}
	s.links[h] = l
	if !l.clientSends {
		return nil
	}
	return c.send(f.channel, performative(codeFlow, s.clientNextOut, window, s.nextOut, window, h, uint32(0),
		uint32(1000)))
}

// hubOf is the event hub an entity path names: HUB or HUB/Partitions/N.
func hubOf(path string) string {
	hub, _, _ := strings.Cut(strings.Trim(path, "/"), "/")
	return strings.ToLower(hub)
}

// transfer gathers a delivery's frames and, once whole, hands it to its
// link's node and settles it.
func (c *conn) transfer(f frame) error {
	s := c.sessions[f.channel]
	if s == nil {
		return errors.New("amqp: transfer on a session never begun")
	}
	s.clientNextOut++
	h, _ := f.field(0).(uint32)
	l := s.links[h]
	if l == nil {
		return fmt.Errorf("amqp: transfer on unknown handle %d", h)
	}
	if l.delivery == nil {
		id, _ := f.field(1).(uint32)
		settled, _ := f.field(4).(bool)
		format, _ := f.field(3).(uint32)
		l.delivery = &delivery{id: id, settled: settled, format: format}
	}
	d := l.delivery
	d.payload = append(d.payload, f.payload...)
	if more, _ := f.field(5).(bool); more {
		return nil
	}
	l.delivery = nil
	var err error
	switch l.target {
	case cbsNode:
		err = c.putToken(f.channel, s, d.payload)
	case managementNode:
		err = c.refuseManagement(f.channel, s, d.payload)
	default:
		err = c.receive(l.target, d)
	}
	if err != nil {
		return err
	}
	if d.settled {
		return nil
	}
	return c.send(f.channel, performative(codeDisposition, true, d.id, nil, true, performative(codeAccepted)))
}

// receive records the events of a delivery to a hub.
func (c *conn) receive(hub string, d *delivery) error {
	m, err := decodeMessage(d.payload)
	if err != nil {
		return err
	}
	if d.format != batchFormat {
		m.Hub = hub
		c.srv.recordMessages([]Message{m.Message})
		return nil
	}
	var events []Message
	for _, inner := range m.sections {
		e, err := decodeMessage(inner)
		if err != nil {
			return fmt.Errorf("decoding a batch's event: %w", err)
		}
		e.Hub = hub
		events = append(events, e.Message)
	}
	c.srv.recordMessages(events)
	return nil
}

// putToken checks a token put on $cbs and answers on the reply link.
func (c *conn) putToken(channel uint16, s *session, payload []byte) error {
	m, err := decodeMessage(payload)
	if err != nil {
		return err
	}
	prop := func(k string) string {
		v, _ := m.ApplicationProperties.Get(k)
		str, _ := v.(string)
		return str
	}
	token, _ := m.value.(string)
	p := PutToken{Type: prop("type"), Audience: prop("name"), Status: 202}
	if prop("operation") != "put-token" {
		return c.replyTo(channel, s, m, 400, "unknown operation")
	}
	creds := c.srv.credentials()
	switch p.Type {
	case TokenTypeSAS:
		p.KeyName, err = verifySAS(token, p.Audience, creds)
	case TokenTypeJWT:
		principal, bearer := creds.Bearers[token]
		p.Principal = principal
		if !bearer && (creds.JWT == "" || token != creds.JWT) {
			err = errors.New("the JWT is not one the namespace trusts")
		}
	default:
		err = fmt.Errorf("token type %q is not supported", p.Type)
	}
	desc := "Accepted"
	if err != nil {
		p.Status, desc = 401, "InvalidSignature: "+err.Error()
	} else if u, perr := url.Parse(p.Audience); perr == nil {
		c.authorized[hubOf(u.Path)] = true
	}
	c.srv.recordToken(p)
	return c.replyTo(channel, s, m, p.Status, desc)
}

// verifySAS checks a SharedAccessSignature token: its resource is the
// audience, its key name the configured one, its expiry ahead, and sig the
// HMAC-SHA256, under the key, of the URL-encoded resource, a newline and
// the expiry. It returns the token's key name.
func verifySAS(token, audience string, creds Credentials) (string, error) {
	rest, ok := strings.CutPrefix(token, "SharedAccessSignature ")
	if !ok {
		return "", errors.New("not a SharedAccessSignature token")
	}
	raw := map[string]string{}
	for _, kv := range strings.Split(rest, "&") {
		k, v, _ := strings.Cut(kv, "=")
		raw[k] = v
	}
	resource, err := url.QueryUnescape(raw["sr"])
	if err != nil || !strings.EqualFold(resource, audience) {
		return raw["skn"], fmt.Errorf("the token's resource %q is not the audience", resource)
	}
	if raw["skn"] != creds.KeyName || creds.Key == "" {
		return raw["skn"], fmt.Errorf("no shared access policy %q", raw["skn"])
	}
	expiry, err := strconv.ParseInt(raw["se"], 10, 64)
	if err != nil || time.Unix(expiry, 0).Before(time.Now()) {
		return raw["skn"], errors.New("the token has expired")
	}
	sig, err := url.QueryUnescape(raw["sig"])
	if err != nil {
		return raw["skn"], errors.New("the signature is not URL-encoded")
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return raw["skn"], errors.New("the signature is not base64")
	}
	mac := hmac.New(sha256.New, []byte(creds.Key))
	mac.Write([]byte(raw["sr"] + "\n" + raw["se"]))
	if !hmac.Equal(got, mac.Sum(nil)) {
		return raw["skn"], errors.New("the signature does not match the key")
	}
	return raw["skn"], nil
}

// refuseManagement answers a $management request with 404: the producer
// sends without asking for the hub's properties.
func (c *conn) refuseManagement(channel uint16, s *session, payload []byte) error {
	m, err := decodeMessage(payload)
	if err != nil {
		return fmt.Errorf("decoding a request to %s: %w", managementNode, err)
	}
	return c.replyTo(channel, s, m, 404, "management operations are not served")
}

// replyTo sends the answer to request m on the link whose target is its
// reply-to address, correlated by its message-id.
func (c *conn) replyTo(channel uint16, s *session, m decoded, status int32, desc string) error {
	var out *link
	for _, l := range s.links {
		if !l.clientSends && l.target == m.replyTo {
			out = l
		}
	}
	if out == nil {
		return fmt.Errorf("amqp: no link to reply-to %q", m.replyTo)
	}
	props := performative(codeProperties, nil, nil, nil, nil, nil, m.MessageID)
	app := performative(codeAppProperties)
	app.Value = Map{{Key: "status-code", Value: status}, {Key: "status-description", Value: desc}}
	var body []byte
	var err error
	for _, sec := range []Described{props, app} {
		if body, err = Encode(body, sec); err != nil {
			return err
		}
	}
	id := s.nextOut
	s.nextOut++
	tag := []byte(strconv.FormatUint(uint64(id), 10))
	return c.sendPayload(channel, performative(codeTransfer, out.handle, id, tag, uint32(0), true), body)
}
