package ssa

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// TestMemoAcrossItsIndex records, forgets and retains entries across the
// size where a Memo starts indexing them, and checks every lookup.
func TestMemoAcrossItsIndex(t *testing.T) {
	id := func(i int) ObjMetadata {
		return ObjMetadata{Namespace: "ns", Name: fmt.Sprint("o", i), GroupKind: schema.GroupKind{Kind: "ConfigMap"}}
	}
	live := func(i int, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetUID(types.UID(fmt.Sprint("uid-", i)))
		u.SetResourceVersion(rv)
		return u
	}
	digest := func(i int) (d [32]byte) { d[0] = byte(i); return d }
	m := NewMemo()
	const n = 3 * smallMemo
	for i := range n {
		m.record(id(i), digest(i), live(i, "1"))
		m.record(id(i), digest(i), live(i, "2")) // an update, not a second entry
	}
	check := func(when string, present func(int) bool) {
		t.Helper()
		for i := range n {
			if got := m.inPlace(id(i), digest(i), live(i, "2")); got != present(i) {
				t.Errorf("%s: inPlace(%d) = %v, want %v", when, i, got, present(i))
			}
		}
	}
	if m.Len() != n {
		t.Fatalf("Len = %d, want %d", m.Len(), n)
	}
	check("recorded", func(int) bool { return true })
	if m.inPlace(id(1), digest(1), live(1, "3")) || m.inPlace(id(1), digest(2), live(1, "2")) || m.inPlace(id(1), digest(1), live(2, "2")) {
		t.Error("a new resourceVersion, manifest or uid was taken for the one recorded")
	}
	for i := 0; i < n; i += 2 {
		m.forget(id(i))
	}
	check("odd ones left", func(i int) bool { return i%2 == 1 })
	keep := map[ObjMetadata]bool{}
	for i := 1; i < 8; i += 2 {
		keep[id(i)] = true
	}
	m.retain(keep)
	check("retained", func(i int) bool { return keep[id(i)] })
	if m.Len() != len(keep) || m.index != nil {
		t.Errorf("Len = %d (index %v), want %d searched one by one", m.Len(), m.index != nil, len(keep))
	}
	var none *Memo
	none.record(id(0), digest(0), live(0, "1"))
	if none.inPlace(id(0), digest(0), live(0, "1")) || none.Len() != 0 {
		t.Error("a nil Memo remembered something")
	}
}
