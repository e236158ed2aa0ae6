package kustomization

import (
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestFastFirstRunWritesInventoryAndEnd: a new Kustomization whose
// phases each end within their hold makes two status writes: the
// inventory ahead of the apply, which carries the phase it was held in
// ("Detecting drift", so that no version pairs an end with a newer
// inventory), and the final status. No version shows the phases replaced
// in time ("Fetching manifests", "Building manifests";
// docs/design/0043-coalesced-progress-writes.md). The end is Flux's:
// Ready=True, "Applied revision: …". The hold is a minute here, so that a
// slow machine does not turn a phase visible.
func TestFastFirstRunWritesInventoryAndEnd(t *testing.T) {
	f, sha := newFixture(t, map[string]string{
		"app/a.yaml": configMapYAML("a", "k", "1"), "app/b.yaml": configMapYAML("b", "k", "2"), "app/c.yaml": configMapYAML("c", "k", "3"),
	})
	holdIn(t, f.ns, time.Minute)
	rev := "main@sha1:" + sha
	from := etcdRevision(t, f)
	k := f.kustomization("fast", "./app", nil)
	f.env.Create(t, k)
	f.waitApplied(k, rev)
	to := etcdRevision(t, f)

	// The first version is the one created, with the CRD's defaults.
	var writes []*kustomizev1.Kustomization
	var status *kustomizev1.KustomizationStatus
	for _, v := range versionsOf(t, f, k, from, 2*time.Second, func(v *kustomizev1.Kustomization) bool { return !newer(to, v.ResourceVersion) }) {
		if c := conditions.Get(v, meta.ReconcilingCondition); c != nil && !strings.HasPrefix(c.Message, "Detecting drift for revision "+rev) {
			t.Errorf("version %s shows Reconciling %s: %q", v.ResourceVersion, c.Status, c.Message)
		}
		if status != nil && !reflect.DeepEqual(v.Status, *status) {
			writes = append(writes, v)
		}
		status = &v.Status
	}
	if len(writes) != 2 {
		t.Fatalf("%d status writes, want 2 (the inventory ahead of the apply, the final status)", len(writes))
	}
	first := conditions.Get(writes[0], meta.ReadyCondition)
	if ids := inventoryIDs(writes[0]); len(ids) != 3 || first == nil || first.Status != metav1.ConditionUnknown ||
		!strings.HasPrefix(first.Message, "Detecting drift for revision "+rev) {
		t.Errorf("first write: inventory %v, Ready %+v; want the three objects and Unknown, detecting drift", ids, first)
	}
	ready := conditions.Get(writes[1], meta.ReadyCondition)
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != meta.ReconciliationSucceededReason ||
		ready.Message != "Applied revision: "+rev || writes[1].Status.ObservedGeneration != writes[1].Generation {
		t.Errorf("final write: Ready %+v, observedGeneration %d; want True, %s, \"Applied revision: %s\", %d",
			ready, writes[1].Status.ObservedGeneration, meta.ReconciliationSucceededReason, rev, writes[1].Generation)
	}
}

// TestSlowPhaseShowsWhileItRuns: a phase that outlasts its hold (the
// default one, progressAfter) is written while it runs, not when the next
// phase begins: the artifact's download is held until the test has seen
// Reconciling=True and Ready=Unknown with kustomize-controller's
// "Fetching manifests" message, no sooner than the hold after the
// Kustomization was created. The run then ends with Flux's final status,
// and no version after the timer's write failed: the writes after it diff
// against what it wrote (no conflict).
func TestSlowPhaseShowsWhileItRuns(t *testing.T) {
	f, sha := newFixture(t, map[string]string{"app/a.yaml": configMapYAML("a", "k", "1")})
	rev := "main@sha1:" + sha
	gate := make(chan struct{})
	gatedFetches.Store(f.ns, gate)
	opened := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(func() { opened(); gatedFetches.Delete(f.ns) })

	from := etcdRevision(t, f)
	k := f.kustomization("slow", "./app", nil)
	created := time.Now()
	f.env.Create(t, k)
	want := "Fetching manifests for revision " + rev + " with a timeout of 30s"
	shows := func(v *kustomizev1.Kustomization) bool {
		rec, ready := conditions.Get(v, meta.ReconcilingCondition), conditions.Get(v, meta.ReadyCondition)
		return rec != nil && rec.Status == metav1.ConditionTrue && rec.Reason == meta.ProgressingReason && rec.Message == want &&
			ready != nil && ready.Status == metav1.ConditionUnknown && ready.Reason == meta.ProgressingReason && ready.Message == want
	}
	versions := versionsOf(t, f, k, from, testenv.DefaultTimeout, shows)
	if len(versions) == 0 || !shows(versions[len(versions)-1]) {
		t.Fatalf("no version showed %q while the artifact was downloaded", want)
	}
	shown := versions[len(versions)-1].ResourceVersion
	if took := time.Since(created); took < progressAfter {
		t.Errorf("the phase showed %s after the Kustomization was created, before its hold of %s", took, progressAfter)
	}
	opened()
	f.waitApplied(k, rev)
	ready := conditions.Get(k, meta.ReadyCondition)
	if ready.Message != "Applied revision: "+rev || conditions.Get(k, meta.ReconcilingCondition) != nil {
		t.Errorf("final status: Ready %q, Reconciling %+v; want \"Applied revision: %s\" and no Reconciling",
			ready.Message, conditions.Get(k, meta.ReconcilingCondition), rev)
	}
	for _, v := range versionsOf(t, f, k, shown, 2*time.Second, func(v *kustomizev1.Kustomization) bool { return v.ResourceVersion == k.ResourceVersion }) {
		if c := conditions.Get(v, meta.ReadyCondition); c != nil && c.Status == metav1.ConditionFalse {
			t.Errorf("version %s failed on the way: %s: %s", v.ResourceVersion, c.Reason, c.Message)
		}
	}
}

// holdIn gives the Kustomizations of namespace ns a hold of d for the
// test (testHold).
func holdIn(t *testing.T, ns string, d time.Duration) {
	t.Helper()
	testHolds.Store(ns, d)
	t.Cleanup(func() { testHolds.Delete(ns) })
}

// testHolds are the holds tests give the Kustomizations of a namespace:
// namespace → time.Duration.
var testHolds sync.Map

// testHold is the test reconcilers' Reconciler.holdFor.
func testHold(obj *kustomizev1.Kustomization) time.Duration {
	if d, ok := testHolds.Load(obj.Namespace); ok {
		return d.(time.Duration)
	}
	return 0
}

// gatedFetches holds the artifact downloads of a namespace's sources
// until its channel closes: namespace → chan struct{}.
var gatedFetches sync.Map

// gatedTransport is the test reconcilers' artifact transport: a request
// for an artifact of a namespace in gatedFetches waits for its gate. The
// artifact server's paths are <kind>/<namespace>/<name>/<file>.
type gatedTransport struct{ next http.RoundTripper }

func (g gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if segs := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/"); len(segs) > 1 {
		if gate, ok := gatedFetches.Load(segs[1]); ok {
			select {
			case <-gate.(chan struct{}):
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
	}
	return g.next.RoundTrip(req)
}
