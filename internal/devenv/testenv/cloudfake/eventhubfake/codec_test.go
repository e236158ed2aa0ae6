package eventhubfake

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCodecRoundTrip(t *testing.T) {
	long := strings.Repeat("x", 300)
	ts := time.Date(2026, 12, 7, 1, 2, 3, 4e6, time.UTC)
	tests := []struct {
		name string
		v    any
		wire []byte
	}{
		{name: "null", v: nil, wire: []byte{0x40}},
		{name: "true", v: true, wire: []byte{0x41}},
		{name: "false", v: false, wire: []byte{0x42}},
		{name: "ubyte", v: uint8(7), wire: []byte{0x50, 7}},
		{name: "ushort", v: uint16(0x0102), wire: []byte{0x60, 1, 2}},
		{name: "uint0", v: uint32(0), wire: []byte{0x43}},
		{name: "smalluint", v: uint32(200), wire: []byte{0x52, 200}},
		{name: "uint", v: uint32(0x01020304), wire: []byte{0x70, 1, 2, 3, 4}},
		{name: "ulong0", v: uint64(0), wire: []byte{0x44}},
		{name: "smallulong", v: uint64(0x12), wire: []byte{0x53, 0x12}},
		{name: "ulong", v: uint64(1 << 40), wire: []byte{0x80, 0, 0, 1, 0, 0, 0, 0, 0}},
		{name: "int", v: int32(-2), wire: []byte{0x71, 0xff, 0xff, 0xff, 0xfe}},
		{name: "long", v: int64(-1), wire: []byte{0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{name: "timestamp", v: ts, wire: append([]byte{0x83}, be64(uint64(ts.UnixMilli()))...)},
		{name: "uuid", v: UUID{1, 2, 3}, wire: append([]byte{0x98, 1, 2, 3}, make([]byte, 13)...)},
		{name: "vbin8", v: []byte{9, 8}, wire: []byte{0xa0, 2, 9, 8}},
		{name: "str8", v: "put-token", wire: append([]byte{0xa1, 9}, "put-token"...)},
		{name: "str32", v: long, wire: append([]byte{0xb1, 0, 0, 1, 44}, long...)},
		{name: "sym8", v: Symbol("amqp:accepted:list"), wire: append([]byte{0xa3, 18}, "amqp:accepted:list"...)},
		{name: "list0", v: []any{}, wire: []byte{0x45}},
		{name: "list8", v: []any{uint32(1), "a"}, wire: []byte{0xc0, 6, 2, 0x52, 1, 0xa1, 1, 'a'}},
		{name: "list32", v: []any{long}, wire: append([]byte{0xd0, 0, 0, 1, 53, 0, 0, 0, 1, 0xb1, 0, 0, 1, 44}, long...)},
		{name: "map8", v: Map{{Key: "status-code", Value: int32(202)}},
			wire: append(append([]byte{0xc1, 19, 2, 0xa1, 11}, "status-code"...), 0x71, 0, 0, 0, 202)},
		{name: "array of symbols", v: Array{Symbol("ab"), Symbol("c")},
			wire: []byte{0xe0, 13, 2, 0xb3, 0, 0, 0, 2, 'a', 'b', 0, 0, 0, 1, 'c'}},
		{name: "described", v: Described{Descriptor: uint64(0x24), Value: []any{}}, wire: []byte{0x00, 0x53, 0x24, 0x45}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(nil, tt.v)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !bytes.Equal(got, tt.wire) {
				t.Errorf("Encode = % x, want % x", got, tt.wire)
			}
			back, rest, err := Decode(tt.wire)
			if err != nil || len(rest) != 0 {
				t.Fatalf("Decode = %v, %d bytes left, %v", back, len(rest), err)
			}
			if diff := cmp.Diff(tt.v, back); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeOtherForms reads the forms the fake never writes but a client
// may send.
func TestDecodeOtherForms(t *testing.T) {
	tests := []struct {
		name string
		wire []byte
		want any
	}{
		{name: "boolean byte", wire: []byte{0x56, 1}, want: true},
		{name: "smallint", wire: []byte{0x54, 0xff}, want: int32(-1)},
		{name: "smalllong", wire: []byte{0x55, 3}, want: int64(3)},
		{name: "sym32", wire: []byte{0xb3, 0, 0, 0, 1, 'x'}, want: Symbol("x")},
		{name: "vbin32", wire: []byte{0xb0, 0, 0, 0, 1, 7}, want: []byte{7}},
		{name: "map32", wire: []byte{0xd1, 0, 0, 0, 6, 0, 0, 0, 2, 0x43, 0x40}, want: Map{{Key: uint32(0), Value: nil}}},
		{name: "array32 of ulong", wire: []byte{0xf0, 0, 0, 0, 13, 0, 0, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 0, 5},
			want: Array{uint64(5)}},
		{name: "described array", wire: []byte{0xe0, 5, 2, 0x00, 0x53, 0x01, 0x43},
			want: Array{Described{Descriptor: uint64(1), Value: uint32(0)}, Described{Descriptor: uint64(1), Value: uint32(0)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rest, err := Decode(tt.wire)
			if err != nil || len(rest) != 0 {
				t.Fatalf("Decode = %v, %d bytes left, %v", got, len(rest), err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRejectsBrokenInput(t *testing.T) {
	tests := []struct {
		name string
		wire []byte
	}{
		{name: "empty", wire: nil},
		{name: "unknown constructor", wire: []byte{0xff}},
		{name: "str8 past the end", wire: []byte{0xa1, 5, 'a'}},
		{name: "str32 past the end", wire: []byte{0xb1, 0xff, 0xff, 0xff, 0xff}},
		{name: "list count beyond its bytes", wire: []byte{0xc0, 1, 200}},
		{name: "odd map", wire: []byte{0xc1, 2, 1, 0x40}},
		{name: "array of billions", wire: []byte{0xf0, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0x40}},
		{name: "described without value", wire: []byte{0x00, 0x53}},
		{name: "nested too deep", wire: bytes.Repeat([]byte{0x00, 0x53, 0x01}, 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, _, err := Decode(tt.wire); err == nil {
				t.Fatalf("Decode(% x) = %v, want an error", tt.wire, v)
			}
		})
	}
}

func be64(x uint64) []byte {
	b := make([]byte, 8)
	for i := range 8 {
		b[7-i] = byte(x >> (8 * i))
	}
	return b
}
