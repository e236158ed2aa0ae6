package shard

import (
	"context"
	"strings"
)

// evaluate recomputes the view from the Leases. A changed view stops all
// admissions until every live member has drained to it; this member
// drains to it once no reconcile it runs is of an object the view gives
// away. When the barrier is passed the gates requeue what came to this
// member.
func (m *Member) evaluate() {
	now := m.cfg.Now()
	m.mu.Lock()
	live, stale := m.livePeers(now)
	held := now.Before(m.heldUntil)
	members := make([]string, 0, len(live)+1)
	if held {
		members = append(members, m.cfg.Identity)
	}
	for _, p := range live {
		members = append(members, p.identity)
	}
	v := NewView(members)
	if v.ID != m.view.ID {
		m.cfg.Log.Info("sharding membership changed", "view", v.ID, "members", v.String())
		m.view, m.ready = v, false
	}
	if !held {
		m.acked, m.ready = "", false
	} else if m.acked != v.ID && !m.foreignInflightLocked() {
		m.acked = v.ID
		m.poke()
	}
	ready := held && m.acked == v.ID && allDrained(live, v.ID)
	var handOver []*Gate
	prev := m.readyView
	if ready && !m.ready {
		m.cfg.Log.Info("sharding view in force", "view", v.ID, "members", v.String())
		m.readyView, handOver = v, m.gates
	}
	m.ready = ready
	m.mu.Unlock()
	for _, g := range handOver {
		g.handOver(prev, v)
	}
	if len(stale) > 0 {
		m.collect(context.Background(), stale)
	}
}

func allDrained(peers []peer, id string) bool {
	for _, p := range peers {
		if p.drained != id {
			return false
		}
	}
	return true
}

// foreignInflightLocked reports whether a reconcile in flight is of an
// object the current view does not give this member.
func (m *Member) foreignInflightLocked() bool {
	for k := range m.inflight {
		_, key, _ := strings.Cut(k, "\x00")
		if m.view.Owner(key) != m.cfg.Identity {
			return true
		}
	}
	return false
}

// admit decides whether a reconcile of kind's key may start now, and if
// so counts it in flight. owned says whether the current view gives key
// to this member (it may still have to wait for the barrier).
func (m *Member) admit(kind, key string) (admitted, owned bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	owned = m.view.Owner(key) == m.cfg.Identity
	if !owned || !m.ready || m.stopping || !m.cfg.Now().Before(m.heldUntil) {
		return false, owned
	}
	m.inflight[kind+"\x00"+key]++
	return true, true
}

// done ends a reconcile admit counted.
func (m *Member) done(kind, key string) {
	k := kind + "\x00" + key
	m.mu.Lock()
	if m.inflight[k]--; m.inflight[k] <= 0 {
		delete(m.inflight, k)
	}
	m.mu.Unlock()
	m.poke()
}

// Owner is key's owner in the view in force, for tests and the UI.
func (m *Member) Owner(key string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.view.Owner(key)
}
