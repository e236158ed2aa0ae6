package shard

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// renew writes this member's Lease with the view it has drained to. A
// member that lost its Lease with reconciles still in flight does not
// claim it again until they ended: were it to rejoin, a view could give it
// an object another member took over while those still run.
func (m *Member) renew(ctx context.Context) {
	m.mu.Lock()
	lost := !m.cfg.Now().Before(m.heldUntil)
	if lost && len(m.inflight) > 0 {
		m.mu.Unlock()
		return
	}
	if lost {
		m.acked = ""
	}
	acked := m.acked
	m.mu.Unlock()

	start := m.cfg.Now()
	if err := m.writeLease(ctx, acked, start); err != nil {
		m.cfg.Log.Error(err, "renewing the sharding lease", "lease", m.lease)
		m.mu.Lock()
		m.nextRenew = start.Add(m.tick())
		m.mu.Unlock()
		return
	}
	m.mu.Lock()
	m.heldUntil = start.Add(m.cfg.RenewDeadline)
	m.nextRenew = start.Add(m.cfg.LeaseDuration / 3)
	m.written = acked
	m.mu.Unlock()
}

func (m *Member) writeLease(ctx context.Context, acked string, now time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.RenewDeadline/2)
	defer cancel()
	leases := m.cfg.Client.CoordinationV1().Leases(m.cfg.Namespace)
	lease, err := leases.Get(ctx, m.lease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: m.lease, Namespace: m.cfg.Namespace}}
		lease.Spec.AcquireTime = &metav1.MicroTime{Time: now}
		m.fillLease(lease, acked, now)
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		return wrap(err, "creating")
	}
	if err != nil {
		return wrap(err, "reading")
	}
	m.fillLease(lease, acked, now)
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return wrap(err, "updating")
}

func (m *Member) fillLease(l *coordinationv1.Lease, acked string, now time.Time) {
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[GroupLabel] = m.cfg.Group
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[DrainedAnnotation] = acked
	id := m.cfg.Identity
	secs := int32(m.cfg.LeaseDuration / time.Second)
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = &id, &secs
	l.Spec.RenewTime = &metav1.MicroTime{Time: now}
}

func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s the sharding lease: %w", what, err)
}

// peer is another member as its Lease shows it.
type peer struct {
	identity string
	drained  string
}

// livePeers are the other members whose Leases are held and unexpired
// (on the local clock, from when their renewTime was last seen to change),
// and the Leases long expired, to delete.
func (m *Member) livePeers(now time.Time) (live []peer, stale []*coordinationv1.Lease) {
	for _, o := range m.store.List() {
		l, ok := o.(*coordinationv1.Lease)
		if !ok || l.Name == m.lease || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil {
			continue
		}
		obs, ok := m.seen[l.Name]
		if !ok || !obs.renew.Equal(l.Spec.RenewTime.Time) {
			obs = observed{renew: l.Spec.RenewTime.Time, at: now}
			m.seen[l.Name] = obs
		}
		d := m.cfg.LeaseDuration
		if l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0 {
			d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
		switch age := now.Sub(obs.at); {
		case age < d:
			live = append(live, peer{identity: *l.Spec.HolderIdentity, drained: l.Annotations[DrainedAnnotation]})
		case age > 3*d:
			stale = append(stale, l)
		}
	}
	return live, stale
}

// collect deletes Leases of members gone long ago (killed, never
// released), on the condition they were not renewed meanwhile.
func (m *Member) collect(ctx context.Context, stale []*coordinationv1.Lease) {
	for _, l := range stale {
		rv := l.ResourceVersion
		err := m.cfg.Client.CoordinationV1().Leases(l.Namespace).Delete(ctx, l.Name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			m.cfg.Log.Error(err, "deleting an expired sharding lease", "lease", l.Name)
		}
		m.mu.Lock()
		delete(m.seen, l.Name)
		m.mu.Unlock()
	}
}
