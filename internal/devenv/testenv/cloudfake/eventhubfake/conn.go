package eventhubfake

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Protocol headers (AMQP 1.0, part 2.2 and 5.3.1).
var (
	headerSASL = []byte("AMQP\x03\x01\x00\x00")
	headerAMQP = []byte("AMQP\x00\x01\x00\x00")
)

// Node names with a meaning of their own.
const (
	cbsNode        = "$cbs"
	managementNode = "$management"
)

// batchFormat is the message format of an Event Hubs batch: each data
// section holds one encoded message.
const batchFormat = 0x80013700

// link is one link a client attached.
type link struct {
	handle         uint32
	clientSends    bool
	source, target string
	delivery       *delivery
}

// delivery is a transfer being received, possibly over several frames.
type delivery struct {
	id      uint32
	settled bool
	format  uint32
	payload []byte
}

// session is one session a client began: its links by handle, and the
// transfer ids of both directions.
type session struct {
	links         map[uint32]*link
	nextOut       uint32
	clientNextOut uint32
}

// conn serves one client connection.
type conn struct {
	srv        *Server
	nc         net.Conn
	sessions   map[uint16]*session
	authorized map[string]bool
}

func newConn(s *Server, nc net.Conn) *conn {
	return &conn{srv: s, nc: nc, sessions: map[uint16]*session{}, authorized: map[string]bool{}}
}

func (c *conn) serve() {
	defer func() { _ = c.nc.Close() }()
	if err := c.handshake(); err != nil {
		return
	}
	for {
		_ = c.nc.SetReadDeadline(time.Now().Add(time.Minute))
		f, err := readFrame(c.nc)
		if err != nil {
			return
		}
		done, err := c.handle(f)
		if err != nil || done {
			return
		}
	}
}

// handshake answers the SASL layer, when the client asks for it, and the
// AMQP protocol header.
func (c *conn) handshake() error {
	_ = c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	head, err := c.header()
	if err != nil {
		return err
	}
	if bytes.Equal(head, headerSASL) {
		if err := c.sasl(); err != nil {
			return err
		}
		if head, err = c.header(); err != nil {
			return err
		}
	}
	if !bytes.Equal(head, headerAMQP) {
		_, _ = c.nc.Write(headerAMQP)
		return fmt.Errorf("amqp: unsupported protocol header %q", head)
	}
	_, err = c.nc.Write(headerAMQP)
	return err
}

func (c *conn) header() ([]byte, error) {
	head := make([]byte, 8)
	_, err := io.ReadFull(c.nc, head)
	return head, err
}

// sasl offers ANONYMOUS and MSSBCBS, the mechanisms Event Hubs takes
// before claims-based authorization, and accepts either.
func (c *conn) sasl() error {
	if _, err := c.nc.Write(headerSASL); err != nil {
		return err
	}
	mechs := performative(codeSASLMechanisms, Array{Symbol("ANONYMOUS"), Symbol("MSSBCBS")})
	if err := writeFrame(c.nc, frameSASL, 0, mechs, nil); err != nil {
		return err
	}
	f, err := readFrame(c.nc)
	if err != nil {
		return err
	}
	outcome := uint8(0)
	if mech, _ := f.field(0).(Symbol); f.code != codeSASLInit || (mech != "ANONYMOUS" && mech != "MSSBCBS") {
		outcome = 1
	}
	if err := writeFrame(c.nc, frameSASL, 0, performative(codeSASLOutcome, outcome), nil); err != nil {
		return err
	}
	if outcome != 0 {
		return errors.New("amqp: unsupported SASL mechanism")
	}
	return nil
}

// handle answers one frame; done is true once the connection is closed.
func (c *conn) handle(f frame) (done bool, err error) {
	switch f.code {
	case 0: // heartbeat
		return false, nil
	case codeOpen:
		return false, c.send(0, performative(codeOpen, "eventhubfake", nil, uint32(maxFrameSize), uint16(4095)))
	case codeBegin:
		return false, c.begin(f)
	case codeAttach:
		return false, c.attach(f)
	case codeFlow:
		return false, nil
	case codeTransfer:
		return false, c.transfer(f)
	case codeDisposition:
		return false, nil
	case codeDetach:
		if s := c.sessions[f.channel]; s != nil {
			h, _ := f.field(0).(uint32)
			delete(s.links, h)
		}
		return false, c.send(f.channel, performative(codeDetach, f.field(0), true))
	case codeEnd:
		delete(c.sessions, f.channel)
		return false, c.send(f.channel, performative(codeEnd))
	case codeClose:
		return true, c.send(0, performative(codeClose))
	}
	return true, fmt.Errorf("amqp: unexpected performative 0x%x", f.code)
}

func (c *conn) send(channel uint16, body Described) error {
	return c.sendPayload(channel, body, nil)
}

func (c *conn) sendPayload(channel uint16, body Described, payload []byte) error {
	return writeFrame(c.nc, frameAMQP, channel, body, payload)
}

// window is the session window the fake announces: large enough for any
// test never to wait on a flow.
const window = uint32(1 << 20)

func (c *conn) begin(f frame) error {
	next, _ := f.field(1).(uint32)
	c.sessions[f.channel] = &session{links: map[uint32]*link{}, clientNextOut: next}
	return c.send(f.channel, performative(codeBegin, f.channel, uint32(0), window, window, uint32(1023)))
}

// address is the address field of a source or target.
func address(v any) string {
	_, fields, ok := describedList(v)
	if !ok || len(fields) == 0 {
		return ""
	}
	s, _ := fields[0].(string)
	return s
}
