package meta

// Annotations a user or the CLI sets on an object to ask something of its
// controller.
const (
	// ReconcileRequestAnnotation asks for a reconciliation now. Any change of
	// its value triggers one; the CLI writes time.Now() in RFC 3339 (nano).
	// The value acted on is echoed in status.lastHandledReconcileAt.
	ReconcileRequestAnnotation string = "reconcile.fluxcd.io/requestedAt"
	// ForceRequestAnnotation asks a HelmRelease for a forced upgrade; it is
	// honoured only when its value equals the ReconcileRequestAnnotation's.
	ForceRequestAnnotation string = "reconcile.fluxcd.io/forceAt"
	// ResetRequestAnnotation asks a HelmRelease to reset its failure counters;
	// honoured only when its value equals the ReconcileRequestAnnotation's.
	ResetRequestAnnotation string = "reconcile.fluxcd.io/resetAt"
	// SuspendReasonAnnotation records why an object was suspended: the
	// flux CLI's `suspend --reason` writes it, and the UI shows it.
	SuspendReasonAnnotation string = "suspend.toolkit.fluxcd.io/reason"
)

// Labels with a meaning to the controllers.
const (
	// WatchLabel set to WatchLabelValue on a Secret or ConfigMap makes every
	// object that references it reconcile when it changes.
	WatchLabel      string = "reconcile.fluxcd.io/watch"
	WatchLabelValue string = "Enabled"
	// ShardKeyLabel assigns an object to a controller shard
	// (--watch-label-selector=sharding.fluxcd.io/key=shard1).
	ShardKeyLabel string = "sharding.fluxcd.io/key"
)

// Finalizer is the finalizer every weir controller puts on the objects it
// reconciles, so it can clean up (artifacts, pruned objects) before deletion.
const Finalizer string = "finalizers.fluxcd.io"

// Field managers: the names under which each controller writes to the API
// server. They appear in managedFields and are matched by Flux's tools.
const (
	SourceControllerManager       string = "source-controller"
	KustomizeControllerManager    string = "kustomize-controller"
	HelmControllerManager         string = "helm-controller"
	NotificationControllerManager string = "notification-controller"
	ImageReflectorManager         string = "image-reflector-controller"
	ImageAutomationManager        string = "image-automation-controller"
	SourceWatcherManager          string = "source-watcher"
	// ClientSideApplyManager is the manager Flux documents for hand edits
	// (`kubectl patch --field-manager=flux-client-side-apply`) that the
	// kustomize controller must leave alone.
	ClientSideApplyManager string = "flux-client-side-apply"
)

// Labels the installer puts on every object it creates (CRDs included) so
// that tools written for Flux recognise weir's components.
const (
	PartOfLabel     string = "app.kubernetes.io/part-of"
	PartOfValue     string = "flux"
	InstanceLabel   string = "app.kubernetes.io/instance"
	VersionLabel    string = "app.kubernetes.io/version"
	ComponentLabel  string = "app.kubernetes.io/component"
	ControllerLabel string = "control-plane"
)

// EventAnnotationPrefix marks annotations on an object whose values the
// notification controller copies into the metadata of events about it.
const EventAnnotationPrefix string = "event.toolkit.fluxcd.io/"
