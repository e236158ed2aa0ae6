package shard

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
)

const (
	// GroupLabel marks the membership Leases of one group: the replicas
	// that share the fleet.
	GroupLabel = "sharding.weir.dev/group"
	// DrainedAnnotation on a member's Lease is the ID of the view it has
	// drained to: it runs no reconcile of an object that view gives to
	// another member, and starts none.
	DrainedAnnotation = "sharding.weir.dev/drained-view"
)

// Config says which group a member joins and how its Lease is kept.
type Config struct {
	// Client writes the member's own Lease; it must not be fenced.
	Client    kubernetes.Interface
	Namespace string
	Group     string
	// Identity names the member on its Lease (holderIdentity) and in the
	// hashing; unique per process.
	Identity string
	// LeaseDuration is how long a Lease not renewed stays a member's;
	// the Lease is renewed every LeaseDuration/3.
	LeaseDuration time.Duration
	// RenewDeadline is how long after the start of its last successful
	// renewal a member takes its Lease for held: shorter than
	// LeaseDuration, so it stops writing before the others can think
	// it gone.
	RenewDeadline time.Duration
	Log           logr.Logger
	Now           func() time.Time
}

// Member is one replica's membership: its Lease, the view of the live
// members it acts on, and its reconciles in flight.
type Member struct {
	cfg   Config
	lease string
	kick  chan struct{}
	store toolscache.Store

	mu        sync.Mutex
	heldUntil time.Time
	nextRenew time.Time
	acked     string
	written   string
	view      View
	ready     bool
	readyView View
	stopping  bool
	seen      map[string]observed
	inflight  map[string]int
	gates     []*Gate
}

// observed is when this member first saw a Lease's renewTime: expiry is
// measured on the local clock from then, as client-go's leader election
// does, so clock skew between replicas does not matter.
type observed struct {
	renew time.Time
	at    time.Time
}

// NewMember prepares a member; Start joins the group.
func NewMember(cfg Config) (*Member, error) {
	if cfg.Client == nil || cfg.Namespace == "" || cfg.Group == "" || cfg.Identity == "" {
		return nil, fmt.Errorf("sharding needs a client, a namespace (RUNTIME_NAMESPACE), a group and an identity")
	}
	if cfg.RenewDeadline <= 0 || cfg.RenewDeadline >= cfg.LeaseDuration {
		return nil, fmt.Errorf("sharding: renew deadline %s must be positive and shorter than the lease duration %s",
			cfg.RenewDeadline, cfg.LeaseDuration)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Member{
		cfg: cfg, lease: LeaseName(cfg.Group, cfg.Identity), kick: make(chan struct{}, 1),
		seen: map[string]observed{}, inflight: map[string]int{},
	}, nil
}

// LeaseName is the name of identity's Lease in group.
func LeaseName(group, identity string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(identity))
	name := fmt.Sprintf("%s-member-%08x", group, h.Sum32())
	return strings.TrimLeft(name, "-")
}

// Identity is this member's name in the hashing.
func (m *Member) Identity() string { return m.cfg.Identity }

// NeedLeaderElection is false: every replica is a member.
func (m *Member) NeedLeaderElection() bool { return false }

// Start watches the group's Leases, keeps this member's own, and
// re-evaluates the view whenever a Lease changes or time passes. At the
// end it stops admitting reconciles, waits for those in flight (renewing
// meanwhile) and deletes its Lease, so the others take its share at once.
func (m *Member) Start(ctx context.Context) error {
	stop := make(chan struct{})
	defer close(stop)
	if err := m.watch(stop); err != nil {
		return err
	}
	tick := time.NewTicker(m.tick())
	defer tick.Stop()
	bg := context.WithoutCancel(ctx)
	m.step(bg)
	for {
		select {
		case <-ctx.Done():
			return m.leave(bg, tick)
		case <-tick.C:
		case <-m.kick:
		}
		m.step(bg)
	}
}

func (m *Member) tick() time.Duration { return max(m.cfg.LeaseDuration/10, 50*time.Millisecond) }

// watch starts an informer on the group's Leases and waits for its list.
func (m *Member) watch(stop chan struct{}) error {
	f := informers.NewSharedInformerFactoryWithOptions(m.cfg.Client, 0,
		informers.WithNamespace(m.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = GroupLabel + "=" + m.cfg.Group }))
	inf := f.Coordination().V1().Leases().Informer()
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { m.poke() },
		UpdateFunc: func(any, any) { m.poke() },
		DeleteFunc: func(any) { m.poke() },
	}); err != nil {
		return fmt.Errorf("watching the sharding leases: %w", err)
	}
	m.store = inf.GetStore()
	f.Start(stop)
	if !toolscache.WaitForCacheSync(stop, inf.HasSynced) {
		return fmt.Errorf("the sharding leases' informer did not sync")
	}
	return nil
}

func (m *Member) poke() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// step renews the Lease when due (or when a new drained view is to be
// published) and re-evaluates the view.
func (m *Member) step(ctx context.Context) {
	m.mu.Lock()
	due := !m.cfg.Now().Before(m.nextRenew) || m.acked != m.written
	m.mu.Unlock()
	if due {
		m.renew(ctx)
	}
	m.evaluate()
}

// leave ends membership: nothing more is admitted; once nothing is in
// flight the Lease is deleted. Meanwhile the member stays in the view and
// keeps draining to it, so the others go on with their own share.
func (m *Member) leave(ctx context.Context, tick *time.Ticker) error {
	m.mu.Lock()
	m.stopping, m.ready = true, false
	m.mu.Unlock()
	for m.busy() && m.Held() == nil {
		<-tick.C
		m.step(ctx)
	}
	if m.busy() {
		return nil
	}
	m.mu.Lock()
	m.heldUntil = time.Time{}
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := m.cfg.Client.CoordinationV1().Leases(m.cfg.Namespace).Delete(ctx, m.lease, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		m.cfg.Log.Error(err, "releasing the sharding lease")
	}
	return nil
}

func (m *Member) busy() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.inflight) > 0
}

// Held is nil while this member's Lease is held with margin: its last
// renewal started less than the renew deadline ago.
func (m *Member) Held() error {
	m.mu.Lock()
	until := m.heldUntil
	m.mu.Unlock()
	if now := m.cfg.Now(); !now.Before(until) {
		return fmt.Errorf("sharding: member %s does not hold its lease %s/%s (renew deadline passed): write refused",
			m.cfg.Identity, m.cfg.Namespace, m.lease)
	}
	return nil
}
