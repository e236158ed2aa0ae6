package eventhubfake

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame types.
const (
	frameAMQP = 0
	frameSASL = 1
)

// Descriptor codes of the performatives, SASL frames, message sections
// and outcomes the fake reads or writes (AMQP 1.0, part 2 and 3).
const (
	codeOpen        = 0x10
	codeBegin       = 0x11
	codeAttach      = 0x12
	codeFlow        = 0x13
	codeTransfer    = 0x14
	codeDisposition = 0x15
	codeDetach      = 0x16
	codeEnd         = 0x17
	codeClose       = 0x18
	codeError       = 0x1d
	codeAccepted    = 0x24
	codeSource      = 0x28
	codeTarget      = 0x29

	codeSASLMechanisms = 0x40
	codeSASLInit       = 0x41
	codeSASLOutcome    = 0x44

	codeMessageAnnotations = 0x72
	codeProperties         = 0x73
	codeAppProperties      = 0x74
	codeData               = 0x75
	codeAMQPValue          = 0x77
)

// maxFrameSize is the largest frame the fake accepts and announces.
const maxFrameSize = 1 << 20

// frame is one decoded frame: its channel, performative (code and
// fields) and, for transfers, the payload after it. An empty frame (a
// heartbeat) has code 0.
type frame struct {
	typ     byte
	channel uint16
	code    uint64
	fields  []any
	payload []byte
}

// field returns the i-th field of f, nil when the list is shorter.
func (f frame) field(i int) any {
	if i < len(f.fields) {
		return f.fields[i]
	}
	return nil
}

func readFrame(r io.Reader) (frame, error) {
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return frame{}, err
	}
	size := binary.BigEndian.Uint32(head[:4])
	doff := int(head[4]) * 4
	if size < 8 || size > maxFrameSize || doff < 8 || uint32(doff) > size {
		return frame{}, fmt.Errorf("amqp: bad frame header size=%d doff=%d", size, doff)
	}
	body := make([]byte, size-8)
	if _, err := io.ReadFull(r, body); err != nil {
		return frame{}, err
	}
	f := frame{typ: head[5], channel: binary.BigEndian.Uint16(head[6:8])}
	body = body[doff-8:]
	if len(body) == 0 {
		return f, nil
	}
	v, rest, err := Decode(body)
	if err != nil {
		return frame{}, fmt.Errorf("decoding performative: %w", err)
	}
	code, fields, ok := describedList(v)
	if !ok {
		return frame{}, errors.New("amqp: frame body is not a described list")
	}
	f.code, f.fields, f.payload = code, fields, rest
	return f, nil
}

// describedList splits a described list into its ulong code and fields.
func describedList(v any) (uint64, []any, bool) {
	d, ok := v.(Described)
	if !ok {
		return 0, nil, false
	}
	code, ok := d.Descriptor.(uint64)
	if !ok {
		return 0, nil, false
	}
	fields, ok := d.Value.([]any)
	return code, fields, ok
}

// performative returns the described list of code with fields, trailing
// nils dropped as the specification allows.
func performative(code uint64, fields ...any) Described {
	for len(fields) > 0 && fields[len(fields)-1] == nil {
		fields = fields[:len(fields)-1]
	}
	return Described{Descriptor: code, Value: fields}
}

func writeFrame(w io.Writer, typ byte, channel uint16, body Described, payload []byte) error {
	b, err := Encode(make([]byte, 8), body)
	if err != nil {
		return err
	}
	b = append(b, payload...)
	binary.BigEndian.PutUint32(b[:4], uint32(len(b)))
	b[4], b[5] = 2, typ
	binary.BigEndian.PutUint16(b[6:8], channel)
	_, err = w.Write(b)
	return err
}
