package eventhubfake

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds the decoder what a hostile client could send: it must
// return an error, never panic or allocate without bound, and what it
// decodes must encode back to a value that decodes the same.
func FuzzDecode(f *testing.F) {
	for _, seed := range [][]byte{
		{0x00, 0x53, 0x10, 0xc0, 3, 1, 0xa1, 0},
		{0xc1, 19, 2, 0xa1, 11, 's', 't', 'a', 't', 'u', 's', '-', 'c', 'o', 'd', 'e', 0x71, 0, 0, 0, 202},
		{0xe0, 13, 2, 0xb3, 0, 0, 0, 2, 'a', 'b', 0, 0, 0, 1, 'c'},
		{0xd0, 0, 0, 0, 5, 0, 0, 0, 1, 0x40},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, _, err := Decode(b)
		if err != nil {
			return
		}
		enc, err := Encode(nil, v)
		if err != nil {
			return // a type the fake never writes (float, decimal, mixed arrays)
		}
		back, _, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-decoding % x: %v", enc, err)
		}
		again, err := Encode(nil, back)
		if err != nil || !bytes.Equal(again, enc) {
			t.Fatalf("encoding is not stable: % x then % x (%v)", enc, again, err)
		}
	})
}

// FuzzReadFrame checks the framing and message decoding of whatever a
// connection delivers.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 12, 2, 0, 0, 0, 0x00, 0x53, 0x18, 0x45})
	f.Fuzz(func(_ *testing.T, b []byte) {
		fr, err := readFrame(bytes.NewReader(b))
		if err != nil {
			return
		}
		_, _ = decodeMessage(fr.payload)
	})
}
