package ssa

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Memo remembers, for each object one caller applies again and again (a
// Kustomization's build), the manifest Apply last found in place and the
// object's uid and resourceVersion at that moment. When the next Apply
// finds the same manifest and the object still at that resourceVersion,
// nothing can have changed it — every write to an object, by anyone,
// gives it a new resourceVersion — so Apply counts it unchanged without
// its dry-run. A Kustomization of 1,500 objects that nothing touched is
// then one list request instead of 1,500 dry-runs; an object changed by
// another tool has a new resourceVersion, is dry-run and is put back as
// before.
//
// The object is also taken as unchanged when its resourceVersion moved
// but its AppliedDigest is the one recorded: others wrote only fields
// nobody applies (a Deployment's status after its rollout).
//
// A Memo lives in memory; Records and RestoreMemo carry it over a restart
// (the Kustomization controller keeps them in a Secret), and what they
// carry proves nothing on its own: every entry is still compared with the
// object as it is. The zero value is not usable; a nil *Memo remembers
// nothing. A Memo is safe for concurrent use.
type Memo struct {
	mu sync.Mutex
	// version counts the changes to items, so that a keeper of Records
	// knows when there is something new to keep.
	version uint64
	// items holds the entries; index finds them once there are more than
	// smallMemo (a map's smallest table has room for 8 entries, a kilobyte
	// here, which a fleet of one-object Kustomizations pays per object).
	items []memoItem
	index map[ObjMetadata]int
}

// smallMemo is how many entries a Memo searches one by one.
const smallMemo = 8

type memoItem struct {
	id ObjMetadata
	memoEntry
}

// memoEntry is what Apply found for one object: the digest of the
// manifest it applied (or found in place) and the object's identity and
// version right after.
type memoEntry struct {
	digest          [sha256.Size]byte
	uid             types.UID
	resourceVersion string
	applied         string // AppliedDigest
}

// liveView is what Memo compares of an object as it is now.
type liveView struct {
	uid             types.UID
	resourceVersion string
	applied         string
}

// matches reports whether the manifest of digest is still in place in
// live.
func (e memoEntry) matches(digest [sha256.Size]byte, live liveView) bool {
	if e.digest != digest || e.uid != live.uid || live.resourceVersion == "" {
		return false
	}
	return e.resourceVersion == live.resourceVersion || e.applied != "" && e.applied == live.applied
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{} }

// findLocked returns the position of id in m.items, or -1.
func (m *Memo) findLocked(id ObjMetadata) int {
	if m.index != nil {
		if i, ok := m.index[id]; ok {
			return i
		}
		return -1
	}
	for i := range m.items {
		if m.items[i].id == id {
			return i
		}
	}
	return -1
}

// reindexLocked makes m.index match m.items.
func (m *Memo) reindexLocked() {
	if len(m.items) <= smallMemo {
		m.index = nil
		return
	}
	m.index = make(map[ObjMetadata]int, len(m.items))
	for i := range m.items {
		m.index[m.items[i].id] = i
	}
}

// Len is the number of objects the Memo holds.
func (m *Memo) Len() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.items)
}

// knows reports whether the Memo holds an entry for id.
func (m *Memo) knows(id ObjMetadata) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.findLocked(id) >= 0
}

// inPlace reports whether the manifest of digest was found in place, or
// applied, in the object live still is.
func (m *Memo) inPlace(id ObjMetadata, digest [sha256.Size]byte, live liveView) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.findLocked(id)
	return i >= 0 && m.items[i].matches(digest, live)
}

// viewOf is the liveView of obj as the API server returned it.
func viewOf(obj *unstructured.Unstructured, opts ApplyOptions) liveView {
	if obj == nil {
		return liveView{}
	}
	return liveView{
		uid:             obj.GetUID(),
		resourceVersion: obj.GetResourceVersion(),
		applied:         AppliedDigest(obj, opts.FieldManager, opts.OverrideManagers),
	}
}

// record remembers that the manifest of digest is in place in the object
// seen as live.
func (m *Memo) record(id ObjMetadata, digest [sha256.Size]byte, live liveView) {
	if m == nil || live.resourceVersion == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := memoEntry{digest: digest, uid: live.uid, resourceVersion: live.resourceVersion, applied: live.applied}
	if i := m.findLocked(id); i >= 0 {
		if m.items[i].memoEntry != e {
			m.items[i].memoEntry = e
			m.version++
		}
		return
	}
	m.version++
	m.items = append(m.items, memoItem{id: id, memoEntry: e})
	if m.index != nil {
		m.index[id] = len(m.items) - 1
	} else if len(m.items) > smallMemo {
		m.reindexLocked()
	}
}

// forget drops what the Memo knows of id.
func (m *Memo) forget(id ObjMetadata) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.findLocked(id)
	if i < 0 {
		return
	}
	m.version++
	last := len(m.items) - 1
	if m.index != nil {
		delete(m.index, id)
		if i != last {
			m.index[m.items[last].id] = i
		}
	}
	m.items[i] = m.items[last]
	m.items[last] = memoItem{}
	m.items = m.items[:last]
	if len(m.items) <= smallMemo {
		m.index = nil
	}
}

// retain drops every object that is not in keep: those gone from the
// build.
func (m *Memo) retain(keep map[ObjMetadata]bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := m.items[:0]
	for _, it := range m.items {
		if keep[it.id] {
			kept = append(kept, it)
		}
	}
	if len(kept) != len(m.items) {
		m.version++
	}
	clear(m.items[len(kept):])
	m.items = kept
	m.reindexLocked()
}

// MemoRecord is one entry of a Memo, as Records gives it and RestoreMemo
// takes it back: the object, the digest of the manifest in place in it,
// and the object's uid, resourceVersion and AppliedDigest then.
type MemoRecord struct {
	Object          ObjMetadata
	Digest          [sha256.Size]byte
	UID             types.UID
	ResourceVersion string
	Applied         string
}

// Records returns the Memo's entries.
func (m *Memo) Records() []MemoRecord {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]MemoRecord, len(m.items))
	for i, it := range m.items {
		out[i] = MemoRecord{Object: it.id, Digest: it.digest, UID: it.uid, ResourceVersion: it.resourceVersion, Applied: it.applied}
	}
	return out
}

// RestoreMemo returns a Memo holding records (the last of an object's wins).
func RestoreMemo(records []MemoRecord) *Memo {
	m := NewMemo()
	for _, r := range records {
		m.record(r.Object, r.Digest, liveView{uid: r.UID, resourceVersion: r.ResourceVersion, applied: r.Applied})
	}
	m.mu.Lock()
	m.version = 0
	m.mu.Unlock()
	return m
}

// Version counts the changes to the Memo's entries since it was made:
// a keeper of Records compares it with the count it last kept.
func (m *Memo) Version() uint64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version
}

// manifestDigest hashes what an apply of obj sends and how: the prepared
// manifest (owner labels included), the field manager and the managers
// whose fields it takes over.
func manifestDigest(obj *unstructured.Unstructured, opts ApplyOptions) ([sha256.Size]byte, error) {
	data, err := json.Marshal(struct {
		Object           map[string]any
		FieldManager     string
		OverrideManagers []string
	}{obj.Object, opts.FieldManager, opts.OverrideManagers})
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("%s: %w", ObjMetadataOf(obj), err)
	}
	return sha256.Sum256(data), nil
}
