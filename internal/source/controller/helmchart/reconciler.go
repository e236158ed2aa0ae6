package helmchart

import (
	"context"
	"errors"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source"
	"github.com/weir-gitops/weir/internal/source/chart"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// Flux's reasons that have no constant elsewhere.
const (
	// sourceUnavailableReason: the sourceRef names no object.
	sourceUnavailableReason = "SourceUnavailable"
	// noSourceArtifactReason: the source has no artifact yet.
	noSourceArtifactReason = "NoSourceArtifact"
)

// Reconciler reconciles HelmChart objects.
type Reconciler struct {
	source.Deps
	// OCI reaches registries (charts of OCI HelmRepositories).
	OCI oci.Client
}

// limits are --helm-chart-max-size and --helm-chart-file-max-size.
func (r *Reconciler) limits() chart.Limits {
	return chart.Limits{MaxChartSize: r.Helm.Limits.MaxChartSize, MaxFileSize: r.Helm.MaxChartFileSize}
}

func (r *Reconciler) defaults() {
	if r.OCI == nil {
		r.OCI = oci.NewClient()
	}
}

// Reconcile runs the shared skeleton with this kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.defaults()
	return reconcile.Run(ctx, r.Driver(), req, &sourcev1.HelmChart{}, r.kind())
}

// kind is the HelmChart as the skeleton runs it.
func (r *Reconciler) kind() reconcile.Kind[*sourcev1.HelmChart, *outcome] {
	return reconcile.Kind[*sourcev1.HelmChart, *outcome]{
		Name:       sourcev1.HelmChartKind,
		Conditions: conditionTypes,
		Suspended:  func(obj *sourcev1.HelmChart) bool { return obj.Spec.Suspend },
		Finalize:   r.finalize,
		Begin:      r.begin,
		Phases:     []reconcile.Phase[*sourcev1.HelmChart, *outcome]{r.source, r.buildAndStore},
		Status:     applyStatus,
		Events:     r.recordEvents,
	}
}

// outcome is what the phases observed and share; applyStatus turns it into
// status.
type outcome struct {
	// src is the object spec.sourceRef names.
	src sourceObject
	// sourceRevision is the source artifact's revision, when it has one.
	sourceRevision string
	// build is the chart built or found up to date; it may carry a name
	// and version after a failure further on.
	build *chart.Build
	// artifact is the stored chart after this run (new, kept, or nil when
	// it vanished from storage).
	artifact       *meta.Artifact
	previousDigest string
	newArtifact    bool
	// verified is true when this run verified the chart's signature.
	verified bool
}

// begin starts the record from the stored chart, when it is still in the
// storage.
func (r *Reconciler) begin(_ context.Context, obj *sourcev1.HelmChart) *outcome {
	out := &outcome{artifact: obj.Status.Artifact}
	if a := obj.Status.Artifact; a != nil {
		out.previousDigest = a.Digest
		if !r.Storage.Exists(*a) {
			out.artifact = nil
		}
	}
	return out
}

// source reads spec.sourceRef and waits for its artifact.
func (r *Reconciler) source(ctx context.Context, obj *sourcev1.HelmChart, out *outcome) error {
	src, err := r.getSource(ctx, obj)
	if err != nil {
		return err
	}
	repo, fromRepository := src.(*sourcev1.HelmRepository)
	a := src.GetArtifact()
	static := fromRepository && repo.IsOCI() // an OCI HelmRepository has no artifact
	if !static && (a == nil || !r.Storage.Exists(*a)) {
		return &errs.Waiting{
			Err:          fmt.Errorf("no artifact available for %s source '%s'", obj.Spec.SourceRef.Kind, obj.Spec.SourceRef.Name),
			Reason:       noSourceArtifactReason,
			RequeueAfter: obj.GetRequeueAfter(),
		}
	}
	if a != nil {
		out.sourceRevision = a.Revision
	}
	out.src = src
	return nil
}

// buildAndStore builds the chart in a working directory of its own and
// stores it, unless the stored chart is up to date.
func (r *Reconciler) buildAndStore(ctx context.Context, obj *sourcev1.HelmChart, out *outcome) error {
	dir, err := os.MkdirTemp("", fmt.Sprintf("helmchart-%s-%s-", obj.Namespace, obj.Name))
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("failed to create temporary working directory: %w", err), Reason: sourcev1.DirCreationFailedReason}
	}
	defer func() { _ = os.RemoveAll(dir) }()

	if repo, fromRepository := out.src.(*sourcev1.HelmRepository); fromRepository {
		out.build, err = r.buildFromRepository(ctx, obj, repo, dir, out)
	} else {
		out.build, err = r.buildFromSource(ctx, obj, out.src, dir)
	}
	if err != nil {
		return buildError(err)
	}
	if out.build.UpToDate {
		out.build.ValuesFiles = obj.Status.ObservedValuesFiles
		return nil
	}
	return r.store(ctx, obj, out)
}

// getSource reads spec.sourceRef, in the HelmChart's namespace.
func (r *Reconciler) getSource(ctx context.Context, obj *sourcev1.HelmChart) (sourceObject, error) {
	var src sourceObject
	switch obj.Spec.SourceRef.Kind {
	case sourcev1.HelmRepositoryKind:
		src = &sourcev1.HelmRepository{}
	case sourcev1.GitRepositoryKind:
		src = &sourcev1.GitRepository{}
	case sourcev1.BucketKind:
		src = &sourcev1.Bucket{}
	default:
		return nil, &errs.Stalling{
			Err: fmt.Errorf("failed to get source: unsupported source kind '%s', must be one of: %v", obj.Spec.SourceRef.Kind,
				[]string{sourcev1.HelmRepositoryKind, sourcev1.GitRepositoryKind, sourcev1.BucketKind}),
			Reason: "UnsupportedSourceKind",
		}
	}
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.SourceRef.Name}
	if err := r.Client.Get(ctx, key, src); err != nil {
		return nil, &errs.Generic{Err: fmt.Errorf("failed to get source: %w", err), Reason: sourceUnavailableReason}
	}
	return src, nil
}

// buildError gives a chart build error its reaction: the persistent kinds
// (a bad reference, values files, version metadata) stall until the spec
// or the source changes, the rest retry.
func buildError(err error) error {
	var be *chart.BuildError
	if !errors.As(err, &be) {
		return err
	}
	if be.Persistent() {
		return &errs.Stalling{Err: be, Reason: be.Reason.Reason}
	}
	return &errs.Generic{Err: be, Reason: be.Reason.Reason}
}

// upToDate says whether the stored chart is already name at version, for
// this generation of the spec.
func (r *Reconciler) upToDate(obj *sourcev1.HelmChart) func(name, version string) bool {
	return func(name, version string) bool {
		a := obj.Status.Artifact
		return a != nil && r.Storage.Exists(*a) && obj.Status.ObservedChartName == name &&
			a.Revision == version && obj.Status.ObservedGeneration == obj.Generation
	}
}

// store copies the built chart into storage as
// helmchart/<ns>/<name>/<chart>-<version>.tgz.
func (r *Reconciler) store(ctx context.Context, obj *sourcev1.HelmChart, out *outcome) error {
	b := out.build
	unlock, err := r.Storage.Lock(ctx, sourcev1.HelmChartKind, obj.Namespace, obj.Name)
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("failed to acquire lock for artifact: %w", err), Reason: sourcev1.AcquireLockFailedReason}
	}
	defer unlock()
	a := r.Storage.NewArtifactFor(sourcev1.HelmChartKind, obj, b.Version, b.FileName())
	if err := r.Storage.CopyFromPath(ctx, &a, b.Path); err != nil {
		return &errs.Generic{Err: fmt.Errorf("unable to copy Helm chart to storage: %w", err), Reason: sourcev1.ArchiveOperationFailedReason}
	}
	if obj.Spec.SourceRef.Kind == sourcev1.HelmRepositoryKind && b.Digest != "" && out.sourceRevision == "" {
		a.Metadata = map[string]string{ociDigestKey: b.Digest}
	}
	out.artifact, out.newArtifact = &a, true
	if _, err := r.Storage.GarbageCollect(ctx, a, r.RetentionRecords, r.RetentionTTL); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "garbage collection of old artifacts failed")
	}
	return nil
}

// ociDigestKey holds, in status.artifact.metadata, the manifest digest of
// a chart pulled from an OCI registry.
const ociDigestKey = "oci-digest"

// finalize removes the object's artifacts, then the finalizer.
func (r *Reconciler) finalize(ctx context.Context, obj *sourcev1.HelmChart) error {
	if _, err := r.Storage.RemoveAll(sourcev1.HelmChartKind, obj.Namespace, obj.Name); err != nil {
		return fmt.Errorf("garbage collection for deleted resource failed: %w", err)
	}
	obj.Status.Artifact = nil
	obj.Status.URL = ""
	controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	ctrl.LoggerFrom(ctx).Info("artifacts removed, finalizer released")
	return nil
}
