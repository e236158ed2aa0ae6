package ssa

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// TestMemoAcrossItsIndex records, forgets and retains entries across the
// size where a Memo starts indexing them, and checks every lookup.
func TestMemoAcrossItsIndex(t *testing.T) {
	id := func(i int) ObjMetadata {
		return ObjMetadata{Namespace: "ns", Name: fmt.Sprint("o", i), GroupKind: schema.GroupKind{Kind: "ConfigMap"}}
	}
	live := func(i int, rv string) liveView {
		return liveView{uid: types.UID(fmt.Sprint("uid-", i)), resourceVersion: rv}
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

// TestMemoMatches is the rule that decides an object still holds the
// manifest recorded: same manifest and uid, and the same resourceVersion or
// the same AppliedDigest.
func TestMemoMatches(t *testing.T) {
	d1, d2 := [32]byte{1}, [32]byte{2}
	recorded := memoEntry{digest: d1, uid: "u", resourceVersion: "10", applied: "A"}
	tests := []struct {
		name   string
		entry  memoEntry
		digest [32]byte
		live   liveView
		want   bool
	}{
		{"same version", recorded, d1, liveView{uid: "u", resourceVersion: "10", applied: "A"}, true},
		{"status written since", recorded, d1, liveView{uid: "u", resourceVersion: "12", applied: "A"}, true},
		{"applied fields changed hands", recorded, d1, liveView{uid: "u", resourceVersion: "12", applied: "B"}, false},
		{"no applied digest recorded", memoEntry{digest: d1, uid: "u", resourceVersion: "10"}, d1, liveView{uid: "u", resourceVersion: "12"}, false},
		{"other manifest", recorded, d2, liveView{uid: "u", resourceVersion: "10", applied: "A"}, false},
		{"recreated", recorded, d1, liveView{uid: "v", resourceVersion: "10", applied: "A"}, false},
		{"unknown version", recorded, d1, liveView{uid: "u", applied: "A"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.entry.matches(tt.digest, tt.live); got != tt.want {
				t.Errorf("matches = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMemoRecordsRoundTrip restores a Memo from its Records and counts
// changes with Version.
func TestMemoRecordsRoundTrip(t *testing.T) {
	m := NewMemo()
	for i := range 12 {
		id := ObjMetadata{Namespace: "ns", Name: fmt.Sprint("o", i), GroupKind: schema.GroupKind{Group: "apps", Kind: "Deployment"}}
		m.record(id, [32]byte{byte(i)}, liveView{uid: types.UID(fmt.Sprint("u", i)), resourceVersion: fmt.Sprint(100 + i), applied: "A"})
	}
	if m.Version() != 12 {
		t.Errorf("Version = %d after 12 new entries", m.Version())
	}
	back := RestoreMemo(m.Records())
	if back.Version() != 0 || back.Len() != 12 {
		t.Fatalf("restored: Version %d, Len %d", back.Version(), back.Len())
	}
	for _, r := range m.Records() {
		if !back.inPlace(r.Object, r.Digest, liveView{uid: r.UID, resourceVersion: r.ResourceVersion}) {
			t.Errorf("%s not restored", r.Object)
		}
	}
	r := m.Records()[0]
	back.record(r.Object, r.Digest, liveView{uid: r.UID, resourceVersion: r.ResourceVersion, applied: r.Applied})
	if back.Version() != 0 {
		t.Error("recording what the Memo already held counted as a change")
	}
	back.forget(r.Object)
	if back.Version() != 1 {
		t.Errorf("Version = %d after a forget", back.Version())
	}
}
