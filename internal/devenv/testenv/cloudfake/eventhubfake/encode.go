package eventhubfake

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Encode appends the AMQP encoding of v to b. It takes the Go types
// Decode returns: nil, bool, uint8, uint16, uint32, uint64, int32, int64,
// string, Symbol, []byte, time.Time, UUID, []any (a list), Map, Array and
// Described; uint32 and uint64 use their short forms where they fit.
func Encode(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case Described:
		return encodeDescribed(b, x)
	case []any:
		return encodeList(b, x)
	case Map:
		items := make([]any, 0, 2*len(x))
		for _, kv := range x {
			items = append(items, kv.Key, kv.Value)
		}
		return encodeCompound(b, 0xc1, items)
	case Array:
		return encodeArray(b, x)
	}
	return encodeScalar(b, v)
}

func encodeScalar(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, 0x40), nil
	case bool:
		if x {
			return append(b, 0x41), nil
		}
		return append(b, 0x42), nil
	case uint8:
		return append(b, 0x50, x), nil
	case uint16:
		return binary.BigEndian.AppendUint16(append(b, 0x60), x), nil
	case uint32:
		return encodeUint(b, x), nil
	case uint64:
		return encodeUlong(b, x), nil
	case int32:
		return binary.BigEndian.AppendUint32(append(b, 0x71), uint32(x)), nil
	case int64:
		return binary.BigEndian.AppendUint64(append(b, 0x81), uint64(x)), nil
	case time.Time:
		return binary.BigEndian.AppendUint64(append(b, 0x83), uint64(x.UnixMilli())), nil
	case UUID:
		return append(append(b, 0x98), x[:]...), nil
	case []byte:
		return encodeVariable(b, 0xa0, x), nil
	case string:
		return encodeVariable(b, 0xa1, []byte(x)), nil
	case Symbol:
		return encodeVariable(b, 0xa3, []byte(x)), nil
	}
	return nil, fmt.Errorf("amqp: cannot encode %T", v)
}

func encodeUint(b []byte, x uint32) []byte {
	switch {
	case x == 0:
		return append(b, 0x43)
	case x < 256:
		return append(b, 0x52, byte(x))
	}
	return binary.BigEndian.AppendUint32(append(b, 0x70), x)
}

func encodeUlong(b []byte, x uint64) []byte {
	switch {
	case x == 0:
		return append(b, 0x44)
	case x < 256:
		return append(b, 0x53, byte(x))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x80), x)
}

// encodeVariable writes binary, string or symbol: code is the short
// form's, the long one's is code+0x10.
func encodeVariable(b []byte, code byte, p []byte) []byte {
	if len(p) < 256 {
		b = append(b, code, byte(len(p)))
	} else {
		b = binary.BigEndian.AppendUint32(append(b, code+0x10), uint32(len(p)))
	}
	return append(b, p...)
}

func encodeDescribed(b []byte, x Described) ([]byte, error) {
	b, err := Encode(append(b, 0x00), x.Descriptor)
	if err != nil {
		return nil, err
	}
	return Encode(b, x.Value)
}

func encodeList(b []byte, items []any) ([]byte, error) {
	if len(items) == 0 {
		return append(b, 0x45), nil
	}
	return encodeCompound(b, 0xc0, items)
}

// encodeCompound writes a list (0xc0) or map (0xc1), in the long form
// when the items or their count do not fit a byte.
func encodeCompound(b []byte, code byte, items []any) ([]byte, error) {
	var body []byte
	for _, it := range items {
		var err error
		if body, err = Encode(body, it); err != nil {
			return nil, err
		}
	}
	return appendCompound(b, code, len(items), body), nil
}

func appendCompound(b []byte, code byte, count int, body []byte) []byte {
	if len(body)+1 < 256 && count < 256 {
		b = append(b, code, byte(len(body)+1), byte(count))
	} else {
		b = binary.BigEndian.AppendUint32(append(b, code+0x10), uint32(len(body)+4))
		b = binary.BigEndian.AppendUint32(b, uint32(count))
	}
	return append(b, body...)
}

// encodeArray writes an array of symbols, strings or ulongs, the element
// types the fake sends; every element must share the first's type.
func encodeArray(b []byte, items Array) ([]byte, error) {
	if len(items) == 0 {
		return append(b, 0xe0, 2, 0, 0x40), nil
	}
	var code byte
	var body []byte
	for _, it := range items {
		switch x := it.(type) {
		case Symbol:
			code, body = 0xb3, binary.BigEndian.AppendUint32(body, uint32(len(x)))
			body = append(body, x...)
		case string:
			code, body = 0xb1, binary.BigEndian.AppendUint32(body, uint32(len(x)))
			body = append(body, x...)
		case uint64:
			code, body = 0x80, binary.BigEndian.AppendUint64(body, x)
		default:
			return nil, fmt.Errorf("amqp: cannot encode an array of %T", it)
		}
	}
	return appendCompound(b, 0xe0, len(items), append([]byte{code}, body...)), nil
}
