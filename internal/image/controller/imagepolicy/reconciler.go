package imagepolicy

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/image/scan"
	"github.com/weir-gitops/weir/internal/image/tagpolicy"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/metrics"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// ControllerName is the event source and field manager, Flux's.
const ControllerName = meta.ImageReflectorManager

// Reasons of this kind that api/image/v1 and api/meta do not define.
const (
	// InvalidPolicyReason stalls a policy whose rules do not compile.
	InvalidPolicyReason = "InvalidPolicy"
	// FailureReason is Flux's metav1.StatusFailure reason.
	FailureReason = "Failure"
)

// Reconciler reconciles ImagePolicies.
type Reconciler struct {
	Client client.Client
	// APIReader reads Secrets uncached; Client when nil.
	APIReader client.Reader
	// Store holds the ImageRepositories' tags.
	Store *scan.Store
	// NoCrossNamespaceRefs is --no-cross-namespace-refs.
	NoCrossNamespaceRefs bool
	// Events may be nil.
	Events *events.Recorder
	// Metrics may be nil.
	Metrics *metrics.Recorder
	// Jitter is --interval-jitter-percentage.
	Jitter float64
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Reconcile runs the shared skeleton with this kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := reconcile.Driver{Client: r.Client, Metrics: r.Metrics, Jitter: r.Jitter, Now: r.Now}
	return reconcile.Run(ctx, d, req, &imagev1.ImagePolicy{}, r.kind())
}

// record is one run of an ImagePolicy: the Ready condition it began with
// and the image it elected.
type record struct {
	before *metav1.Condition
	ref    *imagev1.ImageRef
}

// kind is the ImagePolicy as the skeleton runs it: one phase, the
// election; Ready's transitions are its events.
func (r *Reconciler) kind() reconcile.Kind[*imagev1.ImagePolicy, *record] {
	return reconcile.Kind[*imagev1.ImagePolicy, *record]{
		Name:       imagev1.ImagePolicyKind,
		Conditions: reconcile.Conditions{Owned: []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}},
		Suspended:  func(obj *imagev1.ImagePolicy) bool { return obj.Spec.Suspend },
		Begin: func(_ context.Context, obj *imagev1.ImagePolicy) *record {
			return &record{before: conditions.Get(obj, meta.ReadyCondition).DeepCopy()}
		},
		Phases: []reconcile.Phase[*imagev1.ImagePolicy, *record]{func(ctx context.Context, obj *imagev1.ImagePolicy, out *record) error {
			ref, err := r.reconcile(ctx, obj)
			out.ref = ref
			return err
		}},
		Status: func(obj *imagev1.ImagePolicy, out *record, err error) { applyStatus(obj, out.ref, err) },
		Events: func(ctx context.Context, obj *imagev1.ImagePolicy, out *record, _ error) {
			r.Events.ReadyTransition(ctx, obj, out.before)
		},
	}
}

// errNoTags is Flux's message while the repository has no tags to offer.
var errNoTags = errors.New("no tags in database")

// reconcile elects the latest image and returns its ref.
func (r *Reconciler) reconcile(ctx context.Context, obj *imagev1.ImagePolicy) (*imagev1.ImageRef, error) {
	if obj.GetDigestReflectionPolicy() == imagev1.ReflectAlways && obj.Spec.Interval == nil {
		return nil, &errs.Stalling{Reason: imagev1.IntervalNotConfiguredReason,
			Err: errors.New("spec.interval must be set when spec.digestReflectionPolicy is set to 'Always'")}
	}
	repo, err := r.imageRepository(ctx, obj)
	if err != nil {
		return nil, err
	}
	image, err := scan.ParseImage(repo.Spec.Image, repo.Spec.Insecure)
	if err != nil {
		return nil, &errs.Stalling{Err: err, Reason: imagev1.ImageURLInvalidReason}
	}
	policy, err := tagpolicy.New(obj.Spec.Policy, obj.Spec.FilterTags)
	if err != nil {
		return nil, &errs.Stalling{Err: err, Reason: InvalidPolicyReason}
	}
	tags, err := r.tags(repo)
	if err != nil {
		return nil, err
	}
	latest, err := policy.Latest(tags)
	if err != nil {
		return nil, &errs.Generic{Err: err, Reason: FailureReason}
	}
	ref := &imagev1.ImageRef{Name: repo.Spec.Image, Tag: latest}
	if err := r.reflectDigest(ctx, obj, repo, image, ref); err != nil {
		return nil, &errs.Generic{Err: err, Reason: FailureReason}
	}
	return ref, nil
}

// tags reads the repository's tags at its last scan's revision.
func (r *Reconciler) tags(repo *imagev1.ImageRepository) ([]string, error) {
	if repo.Status.LastScanResult == nil {
		return nil, &errs.Waiting{Err: errNoTags, Reason: imagev1.DependencyNotReadyReason}
	}
	tags, err := r.Store.Get(repo.Namespace, repo.Name, repo.Status.LastScanResult.Revision)
	if errors.Is(err, scan.ErrNoTags) || (err == nil && len(tags) == 0) {
		return nil, &errs.Waiting{Err: errNoTags, Reason: imagev1.DependencyNotReadyReason}
	}
	if err != nil {
		return nil, &errs.Generic{Err: fmt.Errorf("failed to read tags from database: %w", err), Reason: FailureReason}
	}
	return tags, nil
}

// imageRepository reads the referenced ImageRepository if the policy may
// use it.
func (r *Reconciler) imageRepository(ctx context.Context, obj *imagev1.ImagePolicy) (*imagev1.ImageRepository, error) {
	key := types.NamespacedName{Namespace: obj.Spec.ImageRepositoryRef.Namespace, Name: obj.Spec.ImageRepositoryRef.Name}
	if key.Namespace == "" {
		key.Namespace = obj.Namespace
	}
	wrap := func(reason string, err error) error {
		return &errs.Generic{Err: fmt.Errorf("failed to get the referred ImageRepository: %w", err), Reason: reason}
	}
	if r.NoCrossNamespaceRefs && key.Namespace != obj.Namespace {
		return nil, wrap(meta.AccessDeniedReason, fmt.Errorf("cannot access '%s/%s', cross-namespace references have been blocked", imagev1.ImageRepositoryKind, key))
	}
	repo := &imagev1.ImageRepository{}
	if err := r.Client.Get(ctx, key, repo); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, wrap(imagev1.DependencyNotReadyReason, fmt.Errorf("referenced %s does not exist: %w", imagev1.ImageRepositoryKind, err))
		}
		return nil, wrap(FailureReason, err)
	}
	if err := r.checkAccess(ctx, obj, key, repo.Spec.AccessFrom); err != nil {
		return nil, wrap(meta.AccessDeniedReason, fmt.Errorf("access denied: %w", err))
	}
	return repo, nil
}

// checkAccess is Flux's ACL rule: the same namespace, or a namespace whose
// labels match one of accessFrom's selectors.
func (r *Reconciler) checkAccess(ctx context.Context, obj *imagev1.ImagePolicy, key types.NamespacedName, acl *meta.AccessFrom) error {
	if key.Namespace == obj.Namespace {
		return nil
	}
	if acl == nil {
		return fmt.Errorf("'%s/%s' can't be accessed due to missing ACL labels on 'accessFrom'", imagev1.ImageRepositoryKind, key)
	}
	var ns corev1.Namespace
	if err := r.Client.Get(ctx, client.ObjectKey{Name: obj.Namespace}, &ns); err != nil {
		return err
	}
	for _, sel := range acl.NamespaceSelectors {
		if labels.SelectorFromSet(sel.MatchLabels).Matches(labels.Set(ns.Labels)) {
			return nil
		}
	}
	return fmt.Errorf("'%s/%s' can't be accessed due to ACL labels mismatch on namespace '%s'", imagev1.ImageRepositoryKind, key, obj.Namespace)
}

func (r *Reconciler) reader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}
