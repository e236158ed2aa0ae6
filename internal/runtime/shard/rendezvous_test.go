package shard

import (
	"fmt"
	"testing"
)

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ns-%d/ks-%d", i%7, i)
	}
	return out
}

func members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("weir-controller-7d9f-%d_%04x", i, i*7919)
	}
	return out
}

// TestOwnerMovesOnlyTheChangingMembersShare checks, for joins and leaves
// of several sizes, that a key changes owner only to the member that
// joined or from the member that left, that about 1/N of the keys move,
// and that each member's share is about even.
func TestOwnerMovesOnlyTheChangingMembersShare(t *testing.T) {
	const n = 20000
	ks := keys(n)
	for _, tc := range []struct {
		name          string
		before, after []string
		changed       string // the member joining or leaving
		wantMoved     float64
	}{
		{"1 to 2", members(1), members(2), members(2)[1], 1.0 / 2},
		{"2 to 3", members(2), members(3), members(3)[2], 1.0 / 3},
		{"3 to 4", members(3), members(4), members(4)[3], 1.0 / 4},
		{"4 to 3, the second leaves", members(4), without(members(4), 1), members(4)[1], 1.0 / 4},
		{"3 to 2, the first leaves", members(3), without(members(3), 0), members(3)[0], 1.0 / 3},
		{"8 to 9", members(8), members(9), members(9)[8], 1.0 / 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			moved := 0
			share := map[string]int{}
			for _, k := range ks {
				a, b := Owner(k, tc.before), Owner(k, tc.after)
				share[b]++
				if a == b {
					continue
				}
				moved++
				if a != tc.changed && b != tc.changed {
					t.Fatalf("%s moved from %s to %s, neither of which joined or left", k, a, b)
				}
			}
			if got := float64(moved) / n; got < tc.wantMoved*0.9 || got > tc.wantMoved*1.1 {
				t.Errorf("%.3f of the keys moved, want about %.3f", got, tc.wantMoved)
			}
			even := float64(n) / float64(len(tc.after))
			for m, c := range share {
				if float64(c) < even*0.9 || float64(c) > even*1.1 {
					t.Errorf("member %s owns %d keys, want about %.0f", m, c, even)
				}
			}
		})
	}
}

func without(list []string, i int) []string {
	out := append([]string{}, list[:i]...)
	return append(out, list[i+1:]...)
}

// TestOwnerIsDeterministic: the owner depends on the set of members, not
// their order, so replicas that see the same Leases agree.
func TestOwnerIsDeterministic(t *testing.T) {
	m := members(5)
	reversed := []string{m[4], m[3], m[2], m[1], m[0]}
	for _, k := range keys(1000) {
		if a, b := Owner(k, m), Owner(k, reversed); a != b {
			t.Fatalf("%s: owner %s in one order, %s in another", k, a, b)
		}
	}
	for _, tc := range []struct {
		name    string
		members []string
		want    string
	}{
		{"no member", nil, ""},
		{"one member", []string{"a"}, "a"},
	} {
		if got := Owner("ns/x", tc.members); got != tc.want {
			t.Errorf("%s: owner %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNewViewNamesTheSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []string
		same bool
	}{
		{"order does not matter", []string{"a", "b"}, []string{"b", "a"}, true},
		{"duplicates do not matter", []string{"a", "b", "b"}, []string{"a", "b"}, true},
		{"another member", []string{"a", "b"}, []string{"a", "c"}, false},
		{"a member more", []string{"a"}, []string{"a", "b"}, false},
		{"names do not run together", []string{"ab", "c"}, []string{"a", "bc"}, false},
	} {
		if got := NewView(tc.a).ID == NewView(tc.b).ID; got != tc.same {
			t.Errorf("%s: same ID %v, want %v", tc.name, got, tc.same)
		}
	}
}
