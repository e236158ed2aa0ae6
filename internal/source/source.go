// Package source holds what the source reconcilers (GitRepository,
// OCIRepository, Bucket, HelmRepository, HelmChart) share: where artifacts
// are stored, how events and metrics are recorded, the retention policy, the
// interval jitter and the Helm limits and index cache. The assembly fills
// one Deps and hands it to each reconciler.
package source

import (
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/metrics"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/helmrepo"
)

// Deps is embedded in every source reconciler.
type Deps struct {
	Client client.Client
	// APIReader reads Secrets and ServiceAccounts uncached, so credentials
	// are never held in a cluster-wide cache.
	APIReader client.Reader
	Storage   *artifact.Storage
	Events    *events.Recorder
	Metrics   *metrics.Recorder
	// RetentionTTL and RetentionRecords are --artifact-retention-ttl and
	// --artifact-retention-records.
	RetentionTTL     time.Duration
	RetentionRecords int
	// Jitter is --interval-jitter-percentage.
	Jitter float64
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Helm is what the HelmRepository and HelmChart reconcilers share.
	Helm Helm
	// Auth decides whose cloud identity a provider login uses and caches
	// its tokens; nil is the controller's identity without a cache.
	Auth *auth.Settings
}

// Helm holds source-controller's --helm-* settings.
type Helm struct {
	// Limits are --helm-index-max-size and --helm-chart-max-size; zero
	// values take Flux's defaults.
	Limits helmrepo.Limits
	// MaxChartFileSize is --helm-chart-file-max-size: the largest file a
	// chart archive may hold; 0 means repository.DefaultMaxChartFileSize.
	MaxChartFileSize int64
	// Cache holds parsed indexes by artifact path (--helm-cache-*); nil
	// when disabled, Flux's default.
	Cache *helmrepo.Cache
}

// Driver returns what the reconcile skeleton needs from Deps.
func (d Deps) Driver() reconcile.Driver {
	return reconcile.Driver{Client: d.Client, Metrics: d.Metrics, Jitter: d.Jitter, Now: d.Now}
}

// Identity decides whose cloud identity an object in namespace that names
// serviceAccountName uses (Deps.Auth's gate and lockdown default); a
// ServiceAccount named while the gate is off stalls with Flux's message.
func (d Deps) Identity(namespace, serviceAccountName string) (auth.Identity, error) {
	id, err := d.Auth.IdentityFor(namespace, serviceAccountName)
	if errors.Is(err, auth.ErrObjectLevelDisabled) {
		return id, &errs.Stalling{Reason: meta.FeatureGateDisabledReason, Err: fmt.Errorf(
			"to use spec.serviceAccountName for provider authentication please enable the %s feature gate in the controller", auth.FeatureGate)}
	}
	return id, err
}
