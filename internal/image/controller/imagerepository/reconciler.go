package imagerepository

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/registry"
	"github.com/weir-gitops/weir/internal/image/scan"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/metrics"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// ControllerName is the event source and field manager, Flux's.
const ControllerName = meta.ImageReflectorManager

// Reconciler reconciles ImageRepositories.
type Reconciler struct {
	Client client.Client
	// APIReader reads Secrets and ServiceAccounts uncached; Client when nil.
	APIReader client.Reader
	// Store keeps the scanned tags.
	Store *scan.Store
	// MaxTags is --max-tags-per-image-repository; 0 keeps every tag.
	MaxTags int
	// PageSize is the tags asked per page of the registry's list; 0 is
	// go-containerregistry's default (1000).
	PageSize int
	// Events may be nil.
	Events *events.Recorder
	// Metrics may be nil.
	Metrics *metrics.Recorder
	// Jitter is --interval-jitter-percentage.
	Jitter float64
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Auth decides whose cloud identity a provider login uses and caches
	// its tokens; nil is the controller's identity without a cache.
	Auth *auth.Settings
}

func (r *Reconciler) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

// Reconcile runs the shared skeleton with this kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := reconcile.Driver{Client: r.Client, Metrics: r.Metrics, Jitter: r.Jitter, Now: r.Now}
	return reconcile.Run(ctx, d, req, &imagev1.ImageRepository{}, r.kind())
}

// kind is the ImageRepository as the skeleton runs it.
func (r *Reconciler) kind() reconcile.Kind[*imagev1.ImageRepository, *outcome] {
	return reconcile.Kind[*imagev1.ImageRepository, *outcome]{
		Name:       imagev1.ImageRepositoryKind,
		Conditions: reconcile.Conditions{Owned: []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}},
		Suspended:  func(obj *imagev1.ImageRepository) bool { return obj.Spec.Suspend },
		Finalize:   r.finalize,
		Begin: func(_ context.Context, obj *imagev1.ImageRepository) *outcome {
			return &outcome{before: conditions.Get(obj, meta.ReadyCondition).DeepCopy()}
		},
		Phases: []reconcile.Phase[*imagev1.ImageRepository, *outcome]{r.reconcile},
		Status: applyStatus,
		Events: func(ctx context.Context, obj *imagev1.ImageRepository, out *outcome, _ error) {
			r.recordEvents(ctx, obj, out.before, out)
		},
		RequeueAfter: func(obj *imagev1.ImageRepository, out *outcome) time.Duration {
			if out.next > 0 {
				return out.next
			}
			return obj.GetRequeueAfter()
		},
	}
}

// outcome is what the phases observed; applyStatus turns it into status.
type outcome struct {
	// before is the Ready condition the run began with, for the events.
	before    *metav1.Condition
	canonical string
	// scan is the new scan result; nil when no scan was due.
	scan *imagev1.ScanResult
	// listed is how many tags the scan kept after the exclusion list;
	// dropped, how many of those the cap left out.
	listed, dropped int
	// next is when the next scan is due.
	next time.Duration
	// why names the reason for the scan (Flux's words), for the logs.
	why string
}

// reconcile checks the spec, reads credentials and scans when due.
func (r *Reconciler) reconcile(ctx context.Context, obj *imagev1.ImageRepository, out *outcome) error {
	repo, err := scan.ParseImage(obj.Spec.Image, obj.Spec.Insecure)
	if err != nil {
		return &errs.Stalling{Err: err, Reason: imagev1.ImageURLInvalidReason}
	}
	out.canonical = repo.String()
	creds, err := r.credentials(ctx, obj)
	if err != nil {
		err = fmt.Errorf("failed to configure authentication options: %w", err)
		if errors.Is(err, registry.ErrUnsupportedProvider) {
			return &errs.Stalling{Err: err, Reason: imagev1.AuthenticationFailedReason}
		}
		return &errs.Generic{Err: err, Reason: imagev1.AuthenticationFailedReason}
	}
	due, next, why := r.shouldScan(obj, out.canonical)
	out.next, out.why = next, why
	if !due {
		return nil
	}
	ctrl.LoggerFrom(ctx).V(1).Info("scanning", "reason", why)
	if err := r.scan(ctx, obj, repo, scan.Options{Options: creds, Timeout: obj.GetTimeout(), PageSize: r.PageSize}, out); err != nil {
		return &errs.Generic{Err: fmt.Errorf("scan failed: %w", err), Reason: imagev1.ReadOperationFailedReason}
	}
	return nil
}

// credentials reads the Secrets the object names and, for a cloud
// provider, logs in: there spec.serviceAccountName is the identity, not a
// holder of image pull secrets.
func (r *Reconciler) credentials(ctx context.Context, obj *imagev1.ImageRepository) (oci.Options, error) {
	if obj.GetProvider() == imagev1.GenericProvider {
		return scan.Credentials(ctx, r.reader(), obj)
	}
	noSA := obj.DeepCopy()
	noSA.Spec.ServiceAccountName = ""
	creds, credsErr := scan.Credentials(ctx, r.reader(), noSA)
	login, err := r.providerLogin(ctx, obj, creds.Proxy)
	if err != nil {
		return oci.Options{}, err
	}
	creds.Keychain = login
	return creds, credsErr
}

// providerLogin asks spec.provider's registry for credentials, which take
// the place of any docker config, as Flux's do: spec.serviceAccountName
// names the identity (with the ObjectLevelWorkloadIdentity gate), else the
// lockdown default or the controller's own. The exchange goes through
// spec.proxySecretRef's proxy when there is one.
func (r *Reconciler) providerLogin(ctx context.Context, obj *imagev1.ImageRepository, proxy *url.URL) (authn.Keychain, error) {
	id, err := r.Auth.IdentityFor(obj.Namespace, obj.Spec.ServiceAccountName)
	if err != nil {
		return nil, err
	}
	login, err := registry.Login(ctx, obj.GetProvider(), obj.Spec.Image, id, r.Auth.WithProxy(proxy))
	if err != nil {
		return nil, err
	}
	host, err := registry.Host(obj.Spec.Image)
	return registry.Keychain(host, login), err
}

func (r *Reconciler) reader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// Flux's reasons for a scan.
const (
	scanReasonNeverScanned         = "first scan"
	scanReasonReconcileRequested   = "reconcile requested"
	scanReasonNewImageName         = "new image name"
	scanReasonUpdatedExclusionList = "updated exclusion list"
	scanReasonEmptyDatabase        = "no tags in database"
	scanReasonInterval             = "triggered by interval"
)

// shouldScan says whether a scan is due now, why, and when the next one is.
func (r *Reconciler) shouldScan(obj *imagev1.ImageRepository, canonical string) (bool, time.Duration, string) {
	interval := obj.Spec.Interval.Duration
	last := obj.Status.LastScanResult
	if last == nil {
		return true, interval, scanReasonNeverScanned
	}
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok && token != obj.Status.LastHandledReconcileAt {
		return true, interval, scanReasonReconcileRequested
	}
	if canonical != obj.Status.CanonicalImageName {
		return true, interval, scanReasonNewImageName
	}
	if !sameContent(obj.GetExclusionList(), obj.Status.ObservedExclusionList) {
		return true, interval, scanReasonUpdatedExclusionList
	}
	if !r.Store.Has(obj.Namespace, obj.Name, last.Revision) {
		return true, interval, scanReasonEmptyDatabase
	}
	when := interval - r.now().Sub(last.ScanTime.Time)
	if when < time.Second {
		return true, interval, scanReasonInterval
	}
	return false, when, ""
}

// sameContent reports whether a and b hold the same strings, in any order.
func sameContent(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// scan lists, filters, caps and stores the tags, and records the result
// in out.
func (r *Reconciler) scan(ctx context.Context, obj *imagev1.ImageRepository, repo name.Repository, o scan.Options, out *outcome) error {
	tags, err := scan.List(ctx, repo, o)
	if err != nil {
		return err
	}
	kept, err := scan.Exclude(tags, obj.GetExclusionList())
	if err != nil {
		return err
	}
	out.listed = len(kept)
	kept, out.dropped = scan.Cap(kept, r.MaxTags)
	revision, _, err := r.Store.Put(obj.Namespace, obj.Name, kept)
	if err != nil {
		return fmt.Errorf("failed to set tags for %q: %w", out.canonical, err)
	}
	out.scan = &imagev1.ScanResult{
		Revision:   revision,
		TagCount:   len(kept),
		ScanTime:   metav1.NewTime(r.now()),
		LatestTags: scan.Latest(kept),
	}
	return nil
}

// finalize deletes the stored tags and releases the finalizer.
func (r *Reconciler) finalize(_ context.Context, obj *imagev1.ImageRepository) error {
	if err := r.Store.Delete(obj.Namespace, obj.Name); err != nil && !errors.Is(err, scan.ErrNoTags) {
		return err
	}
	controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	return nil
}
