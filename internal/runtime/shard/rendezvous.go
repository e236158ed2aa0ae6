package shard

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// Owner is the member of members that rendezvous (highest random weight)
// hashing gives key: each member draws a weight for the key, the highest
// wins. A member joining takes from each other member only the keys it now
// outweighs, a member leaving gives away only its own: about 1/N of the
// keys move, and no table has to be agreed on. Empty when members is.
func Owner(key string, members []string) string {
	var best string
	var bestW uint64
	for _, m := range members {
		w := weight(m, key)
		if best == "" || w > bestW || (w == bestW && m < best) {
			best, bestW = m, w
		}
	}
	return best
}

// weight is member's draw for key: FNV-1a of both, then splitmix64's
// finalizer, since FNV alone spreads member names that differ in one
// character poorly.
func weight(member, key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(key))
	z := h.Sum64()
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// View is one set of live members, sorted. Its ID names it on the Leases,
// where a member says which view it has drained to.
type View struct {
	Members []string
	ID      string
}

// NewView sorts members and names the set.
func NewView(members []string) View {
	m := slices.Clone(members)
	slices.Sort(m)
	m = slices.Compact(m)
	h := fnv.New64a()
	for _, x := range m {
		_, _ = h.Write([]byte(x))
		_, _ = h.Write([]byte{0})
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], h.Sum64())
	return View{Members: m, ID: fmt.Sprintf("%d-%x", len(m), b)}
}

// Owner is key's member in v.
func (v View) Owner(key string) string { return Owner(key, v.Members) }

// Has reports whether member is in v.
func (v View) Has(member string) bool { return slices.Contains(v.Members, member) }

func (v View) String() string { return strings.Join(v.Members, ",") }
