package eventhubfake

import (
	"errors"
	"fmt"
)

// decoded is a message taken apart: the Message a test sees, and what
// the fake itself needs of it.
type decoded struct {
	Message
	// sections are the data sections, one by one (a batch's events).
	sections [][]byte
	// value is the amqp-value section's value (a put-token's token).
	value   any
	replyTo string
}

// decodeMessage reads the sections of a message (AMQP 1.0, part 3.2).
func decodeMessage(b []byte) (decoded, error) {
	var m decoded
	for len(b) > 0 {
		v, rest, err := Decode(b)
		if err != nil {
			return decoded{}, fmt.Errorf("decoding a message section: %w", err)
		}
		b = rest
		sec, ok := v.(Described)
		if !ok {
			return decoded{}, errors.New("amqp: message section is not described")
		}
		code, _ := sec.Descriptor.(uint64)
		if err := m.section(code, sec.Value); err != nil {
			return decoded{}, err
		}
	}
	return m, nil
}

func (m *decoded) section(code uint64, v any) error {
	switch code {
	case codeProperties:
		fields, ok := v.([]any)
		if !ok {
			return errors.New("amqp: properties section is not a list")
		}
		at := func(i int) any {
			if i < len(fields) {
				return fields[i]
			}
			return nil
		}
		m.MessageID = at(0)
		m.replyTo, _ = at(4).(string)
		if ct, ok := at(6).(Symbol); ok {
			m.ContentType = string(ct)
		}
	case codeAppProperties:
		props, ok := v.(Map)
		if !ok && v != nil {
			return errors.New("amqp: application-properties section is not a map")
		}
		m.ApplicationProperties = props
	case codeData:
		data, ok := v.([]byte)
		if !ok {
			return errors.New("amqp: data section is not binary")
		}
		m.sections = append(m.sections, data)
		m.Data = append(m.Data, data...)
	case codeAMQPValue:
		m.value = v
	}
	// header, annotations and footer are read past.
	return nil
}
