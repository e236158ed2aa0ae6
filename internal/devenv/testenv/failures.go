package testenv

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// SourceObject is a source with a stored artifact.
type SourceObject interface {
	Reconciled
	GetArtifact() *meta.Artifact
}

// Sabotage is one way to break a source that has stored an artifact, and
// how the failure must read.
type Sabotage struct {
	Name string
	// Break changes what the source reads (a Secret, the spec, the
	// server); the object is fresh from the API server when it runs.
	Break func()
	// Reason is the Ready condition's reason the failure must carry.
	Reason string
	// Mentions are texts the Ready message must contain.
	Mentions []string
	// Stalled is whether the failure stalls (no retry until the spec
	// changes) rather than being retried.
	Stalled bool
}

// FailureChecks are the further checks of AssertFailuresKeepArtifact.
type FailureChecks struct {
	// Secrets are texts no message may contain (passwords, keys).
	Secrets []string
	// FetchFailedReason checks that FetchFailed carries the failure's
	// reason, not only that it is True.
	FetchFailedReason bool
	// Event checks that the failure was recorded as a Warning event with
	// the Ready message.
	Event bool
}

// AssertFailuresKeepArtifact breaks a source that stored good in each way
// in turn and checks what every source kind promises (Flux's behaviour):
// Ready False with the reason and a message that says what failed and
// leaks no secret, FetchFailed True, Reconciling for a retried failure and
// Stalled for one that cannot work, and the last good artifact kept and
// still served.
func (e *Env) AssertFailuresKeepArtifact(t *testing.T, obj SourceObject, good meta.Artifact, check FailureChecks, cases []Sabotage) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			if err := e.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
				t.Fatal(err)
			}
			tt.Break()
			e.RequestReconcile(t, obj)
			ready := e.WaitForFailure(t, obj, tt.Reason)
			for _, s := range tt.Mentions {
				if !strings.Contains(ready.Message, s) {
					t.Errorf("message %q does not mention %q", ready.Message, s)
				}
			}
			for _, s := range check.Secrets {
				if strings.Contains(ready.Message, s) {
					t.Errorf("message leaks a secret (%q): %q", s, ready.Message)
				}
			}
			fetchFailed := conditions.Get(obj, sourcev1.FetchFailedCondition)
			if !conditions.IsTrue(obj, sourcev1.FetchFailedCondition) || check.FetchFailedReason && fetchFailed.Reason != tt.Reason {
				t.Errorf("FetchFailed = %+v, want True with reason %s", fetchFailed, tt.Reason)
			}
			if stalled := conditions.IsTrue(obj, meta.StalledCondition); stalled != tt.Stalled {
				t.Errorf("Stalled = %v, want %v", stalled, tt.Stalled)
			}
			if !tt.Stalled && !conditions.IsTrue(obj, meta.ReconcilingCondition) {
				t.Error("a retried failure must be Reconciling")
			}
			if a := obj.GetArtifact(); a == nil || a.Digest != good.Digest {
				t.Fatalf("artifact lost or changed: %+v", a)
			}
			DownloadArtifact(t, obj.GetArtifact())
			if check.Event {
				e.AssertEvent(t, obj, tt.Reason, ready.Message)
			}
		})
	}
}
