package eventhubfake

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Symbol is an AMQP symbol: an ASCII name, distinct from a string on the
// wire.
type Symbol string

// Described is a value with its descriptor: performatives, message
// sections and outcomes are lists described by a ulong code.
type Described struct {
	Descriptor any
	Value      any
}

// KV is one entry of an AMQP map. Maps are decoded into slices of
// entries: keys may be of any type, even ones Go cannot hash.
type KV struct {
	Key, Value any
}

// Map is an AMQP map, in wire order.
type Map []KV

// Get returns the value of the first entry whose key is k.
func (m Map) Get(k any) (any, bool) {
	for _, kv := range m {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return nil, false
}

// Array is an AMQP array: elements of one type, encoded with one
// constructor.
type Array []any

// UUID is an AMQP uuid.
type UUID [16]byte

// maxDepth bounds the nesting of compound values, so that hostile input
// cannot exhaust the stack.
const maxDepth = 64

var errShort = errors.New("amqp: value runs past the end of its frame")

// decoder reads AMQP values from a buffer.
type decoder struct {
	b     []byte
	depth int
}

// Decode reads one value from b and returns it with the bytes left.
func Decode(b []byte) (any, []byte, error) {
	d := &decoder{b: b}
	v, err := d.value()
	return v, d.b, err
}

func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || n > len(d.b) {
		return nil, errShort
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out, nil
}

func (d *decoder) byte() (byte, error) {
	p, err := d.take(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (d *decoder) value() (any, error) {
	code, err := d.byte()
	if err != nil {
		return nil, err
	}
	return d.valueOf(code)
}

// valueOf reads the value whose constructor code is code.
func (d *decoder) valueOf(code byte) (any, error) {
	if code == 0x00 {
		return d.described()
	}
	if v, ok, err := d.fixed(code); ok || err != nil {
		return v, err
	}
	switch code {
	case 0xa0, 0xb0, 0xa1, 0xb1, 0xa3, 0xb3:
		return d.variable(code)
	case 0x45:
		return []any{}, nil
	case 0xc0, 0xd0, 0xc1, 0xd1, 0xe0, 0xf0:
		return d.compound(code)
	}
	return nil, fmt.Errorf("amqp: unknown constructor 0x%02x", code)
}

func (d *decoder) described() (any, error) {
	if d.depth++; d.depth > maxDepth {
		return nil, errors.New("amqp: values nested too deep")
	}
	defer func() { d.depth-- }()
	desc, err := d.value()
	if err != nil {
		return nil, err
	}
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	return Described{Descriptor: desc, Value: v}, nil
}

// fixedWidths are the payload sizes of the fixed-width types.
var fixedWidths = map[byte]int{
	0x40: 0, 0x41: 0, 0x42: 0, 0x43: 0, 0x44: 0, 0x56: 1, 0x50: 1, 0x51: 1, 0x52: 1, 0x53: 1, 0x54: 1,
	0x55: 1, 0x60: 2, 0x61: 2, 0x70: 4, 0x71: 4, 0x72: 4, 0x73: 4, 0x74: 4, 0x80: 8, 0x81: 8, 0x82: 8,
	0x83: 8, 0x84: 8, 0x94: 16, 0x98: 16,
}

// fixed reads the fixed-width types; ok is false for any other code.
func (d *decoder) fixed(code byte) (v any, ok bool, err error) {
	w, ok := fixedWidths[code]
	if !ok {
		return nil, false, nil
	}
	p, err := d.take(w)
	if err != nil {
		return nil, true, err
	}
	return fixedValue(code, p), true, nil
}

// fixedValues convert the payload of each fixed-width type; char and the
// decimals are kept as their bytes.
var fixedValues = map[byte]func(p []byte) any{
	0x40: func([]byte) any { return nil },
	0x41: func([]byte) any { return true },
	0x42: func([]byte) any { return false },
	0x56: func(p []byte) any { return p[0] != 0 },
	0x43: func([]byte) any { return uint32(0) },
	0x44: func([]byte) any { return uint64(0) },
	0x50: func(p []byte) any { return p[0] },
	0x51: func(p []byte) any { return int8(p[0]) },
	0x52: func(p []byte) any { return uint32(p[0]) },
	0x53: func(p []byte) any { return uint64(p[0]) },
	0x54: func(p []byte) any { return int32(int8(p[0])) },
	0x55: func(p []byte) any { return int64(int8(p[0])) },
	0x60: func(p []byte) any { return binary.BigEndian.Uint16(p) },
	0x61: func(p []byte) any { return int16(binary.BigEndian.Uint16(p)) },
	0x70: func(p []byte) any { return binary.BigEndian.Uint32(p) },
	0x71: func(p []byte) any { return int32(binary.BigEndian.Uint32(p)) },
	0x72: func(p []byte) any { return math.Float32frombits(binary.BigEndian.Uint32(p)) },
	0x80: func(p []byte) any { return binary.BigEndian.Uint64(p) },
	0x81: func(p []byte) any { return int64(binary.BigEndian.Uint64(p)) },
	0x82: func(p []byte) any { return math.Float64frombits(binary.BigEndian.Uint64(p)) },
	0x83: func(p []byte) any { return time.UnixMilli(int64(binary.BigEndian.Uint64(p))).UTC() },
	0x98: func(p []byte) any {
		var u UUID
		copy(u[:], p)
		return u
	},
}

// fixedValue converts the payload p of a fixed-width type.
func fixedValue(code byte, p []byte) any {
	if f, ok := fixedValues[code]; ok {
		return f(p)
	}
	return append([]byte(nil), p...)
}

// size reads a one- or four-byte length, as the code's width says.
func (d *decoder) size(code byte) (int, error) {
	if code&0xf0 == 0xa0 || code&0xf0 == 0xc0 || code&0xf0 == 0xe0 {
		n, err := d.byte()
		return int(n), err
	}
	p, err := d.take(4)
	if err != nil {
		return 0, err
	}
	n := binary.BigEndian.Uint32(p)
	if n > uint32(len(d.b)) {
		return 0, errShort
	}
	return int(n), nil
}

func (d *decoder) variable(code byte) (any, error) {
	n, err := d.size(code)
	if err != nil {
		return nil, err
	}
	p, err := d.take(n)
	if err != nil {
		return nil, err
	}
	switch code {
	case 0xa0, 0xb0:
		return append([]byte(nil), p...), nil
	case 0xa1, 0xb1:
		return string(p), nil
	default:
		return Symbol(p), nil
	}
}

// compound reads a list, map or array: a size, a count, then the items.
func (d *decoder) compound(code byte) (any, error) {
	if d.depth++; d.depth > maxDepth {
		return nil, errors.New("amqp: values nested too deep")
	}
	defer func() { d.depth-- }()
	n, err := d.size(code)
	if err != nil {
		return nil, err
	}
	body, err := d.take(n)
	if err != nil {
		return nil, err
	}
	inner := &decoder{b: body, depth: d.depth}
	var count int
	if code == 0xc0 || code == 0xc1 || code == 0xe0 {
		c, err := inner.byte()
		count = int(c)
		if err != nil {
			return nil, err
		}
	} else {
		p, err := inner.take(4)
		if err != nil {
			return nil, err
		}
		count = int(binary.BigEndian.Uint32(p))
	}
	// Every item takes at least a byte, arrays' elements aside.
	if count > len(inner.b) && code != 0xe0 && code != 0xf0 {
		return nil, errShort
	}
	switch code {
	case 0xc0, 0xd0:
		return inner.items(count)
	case 0xc1, 0xd1:
		return inner.mapItems(count)
	default:
		return inner.arrayItems(count)
	}
}

func (d *decoder) items(count int) ([]any, error) {
	out := make([]any, 0, count)
	for range count {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (d *decoder) mapItems(count int) (Map, error) {
	if count%2 != 0 {
		return nil, errors.New("amqp: map with an odd number of items")
	}
	items, err := d.items(count)
	if err != nil {
		return nil, err
	}
	m := make(Map, 0, count/2)
	for i := 0; i < len(items); i += 2 {
		m = append(m, KV{Key: items[i], Value: items[i+1]})
	}
	return m, nil
}

// arrayItems reads count elements sharing one constructor.
func (d *decoder) arrayItems(count int) (Array, error) {
	code, err := d.byte()
	if err != nil {
		return nil, err
	}
	var desc any
	if code == 0x00 {
		if desc, err = d.value(); err != nil {
			return nil, err
		}
		if code, err = d.byte(); err != nil {
			return nil, err
		}
	}
	// Elements of zero width (null, true, list0) cost no byte: allow a
	// few beyond the bytes left, never billions.
	if count > len(d.b)+16 {
		return nil, errShort
	}
	out := make(Array, 0, count)
	for range count {
		v, err := d.valueOf(code)
		if err != nil {
			return nil, err
		}
		if desc != nil {
			v = Described{Descriptor: desc, Value: v}
		}
		out = append(out, v)
	}
	return out, nil
}
