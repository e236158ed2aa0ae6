package kinds

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/view/objectstate"
)

// Kind describes one Flux kind to the CLI.
type Kind struct {
	// Kind is the API kind, as in `kind: GitRepository`.
	Kind         string
	GroupVersion schema.GroupVersion
	// Noun is the flux CLI's name for the kind in messages:
	// "► suspending source git podinfo in flux-system namespace".
	Noun string
	// Use is the subcommand name (below `source` for sources): "git",
	// "kustomization"; Aliases are its short forms ("ks").
	Use     string
	Aliases []string
	// GetUse is the subcommand name under `get`, plural for non-sources:
	// "kustomizations"; Use and Aliases are accepted there too.
	GetUse string
	// Source is true for the kinds under `source`.
	Source bool
	// Image is true for the image automation kinds, which the flux CLI
	// puts under `image` (`suspend image repository NAME`) and `get images`.
	Image bool
	// Artifact is true for ArtifactGenerator, which the flux CLI puts
	// under `artifact` (`export artifact generator NAME`, `get artifacts
	// generators`).
	Artifact bool

	// revision is nil for a kind that has none (Receiver): its table has
	// no REVISION column, as in the flux CLI.
	revision func(u *unstructured.Unstructured) string
	verb     string // "fetched" or "applied", for SuccessMessage
	// completed, when set, is SuccessMessage's whole text, for a kind
	// without a revision to report.
	completed string
	static    func(u *unstructured.Unstructured) bool
	// readyMessage, when set, is the MESSAGE column of every object of a
	// kind that no controller reports on (Alert, Provider): the flux CLI
	// shows such objects as ready with fixed words.
	readyMessage string
	// origin is nil for a kind that reads from nowhere (Receiver): -o wide
	// then has no SOURCE column.
	origin func(u *unstructured.Unstructured) string
	// columns, when set, replace the REVISION column of the table (the
	// image kinds: LAST SCAN, IMAGE and TAG, LAST RUN).
	columns []Column
	// noSuspended drops the SUSPENDED column (ImagePolicy, as the flux CLI).
	noSuspended bool
	// success, when set, is SuccessMessage.
	success func(u *unstructured.Unstructured) string
}

// Column is one kind-specific column of `get`'s table.
type Column struct {
	Header string
	Value  func(u *unstructured.Unstructured) string
}

// The kinds weir's CLI knows.
var (
	GitRepository = Kind{
		Kind: sourcev1.GitRepositoryKind, GroupVersion: sourcev1.GroupVersion,
		Noun: "source git", Use: "git", GetUse: "git", Source: true,
		revision: artifactRevision, verb: "fetched", origin: specString("url"),
	}
	OCIRepository = Kind{
		Kind: sourcev1.OCIRepositoryKind, GroupVersion: sourcev1.GroupVersion,
		Noun: "source oci", Use: "oci", GetUse: "oci", Source: true,
		revision: artifactRevision, verb: "fetched", origin: specString("url"),
	}
	Bucket = Kind{
		Kind: sourcev1.BucketKind, GroupVersion: sourcev1.GroupVersion,
		Noun: "source bucket", Use: "bucket", GetUse: "bucket", Source: true,
		revision: artifactRevision, verb: "fetched", origin: bucketOrigin,
	}
	HelmRepository = Kind{
		Kind: sourcev1.HelmRepositoryKind, GroupVersion: sourcev1.GroupVersion,
		Noun: "source helm", Use: "helm", GetUse: "helm", Source: true,
		revision: artifactRevision, verb: "fetched", origin: specString("url"),
		// An OCI HelmRepository has no reconciler: the flux CLI treats it
		// as static.
		static: func(u *unstructured.Unstructured) bool {
			t, _, _ := unstructured.NestedString(u.Object, "spec", "type")
			return t == sourcev1.HelmRepositoryTypeOCI
		},
	}
	HelmChart = Kind{
		Kind: sourcev1.HelmChartKind, GroupVersion: sourcev1.GroupVersion,
		Noun: "source chart", Use: "chart", GetUse: "chart", Source: true,
		revision: artifactRevision, verb: "fetched", origin: refOrigin("spec", "sourceRef"),
	}
	// ExternalArtifact is written by another controller (an
	// ArtifactGenerator's, for one): nothing in it can be suspended or
	// asked to reconcile, so `get` has no SUSPENDED column and the kind is
	// static. Its SOURCE column is spec.sourceRef as the flux CLI prints
	// it, Kind/namespace/name without defaulting the namespace.
	ExternalArtifact = Kind{
		Kind: sourcev1.ExternalArtifactKind, GroupVersion: sourcev1.GroupVersion,
		Noun: "source external", Use: "external", GetUse: "external", Source: true,
		revision: artifactRevision, verb: "fetched",
		columns:     []Column{{Header: "Source", Value: externalArtifactSource}},
		noSuspended: true,
		static:      func(*unstructured.Unstructured) bool { return true },
	}
	// ArtifactGenerator is source-watcher's kind. It is paused by the
	// source.extensions.fluxcd.io/reconcile annotation, not spec.suspend
	// (see Suspended), and has no revision of its own: `reconcile` and
	// `resume` report its Ready message.
	ArtifactGenerator = Kind{
		Kind: sourceextensionsv1beta1.ArtifactGeneratorKind, GroupVersion: sourceextensionsv1beta1.GroupVersion,
		Noun: "artifact generator", Use: "generator", GetUse: "generators", Artifact: true,
		success: readyMessage,
	}
	Kustomization = Kind{
		Kind: kustomizev1.KustomizationKind, GroupVersion: kustomizev1.GroupVersion,
		Noun: "kustomization", Use: "kustomization", Aliases: []string{"ks"}, GetUse: "kustomizations",
		revision: statusString("lastAppliedRevision"), verb: "applied", origin: refOrigin("spec", "sourceRef"),
	}
	HelmRelease = Kind{
		Kind: helmv2.HelmReleaseKind, GroupVersion: helmv2.GroupVersion,
		Noun: "helmrelease", Use: "helmrelease", Aliases: []string{"hr"}, GetUse: "helmreleases",
		revision: helmReleaseRevision, verb: "applied", origin: helmReleaseOrigin,
	}
	// Receiver is notification-controller's webhook receiver. It has
	// neither revision nor source; `reconcile` and `resume` report it with
	// the flux CLI's fixed words.
	Receiver = Kind{
		Kind: notificationv1.ReceiverKind, GroupVersion: notificationv1.GroupVersion,
		Noun: "receiver", Use: "receiver", GetUse: "receivers",
		completed: notificationv1.ReceiverKind + " reconciliation completed",
	}
	// Provider and Alert are static since Flux 2.1: notification-controller
	// reads them when an event arrives and writes no status, so nothing is
	// waited for and `get` prints them ready.
	Provider = staticKind(notificationv1beta3.ProviderKind, notificationv1beta3.GroupVersion,
		"alert-provider", "alert-providers")
	Alert = staticKind(notificationv1beta3.AlertKind, notificationv1beta3.GroupVersion, "alert", "alerts")
)

// The image automation kinds, with the flux CLI's columns and success
// messages.
var (
	ImageRepository = Kind{
		Kind: imagev1.ImageRepositoryKind, GroupVersion: imagev1.GroupVersion,
		Noun: "image repository", Use: "repository", GetUse: "repository", Image: true,
		origin:  specString("image"),
		columns: []Column{{Header: "Last scan", Value: timeString("status", "lastScanResult", "scanTime")}},
		success: func(u *unstructured.Unstructured) string {
			n, _, _ := unstructured.NestedInt64(u.Object, "status", "lastScanResult", "tagCount")
			return fmt.Sprintf("scan fetched %d tags", n)
		},
	}
	ImagePolicy = Kind{
		Kind: imagev1.ImagePolicyKind, GroupVersion: imagev1.GroupVersion,
		Noun: "image policy", Use: "policy", GetUse: "policy", Image: true,
		origin: refOrigin("spec", "imageRepositoryRef"),
		columns: []Column{
			{Header: "Image", Value: statusString("latestRef", "name")},
			{Header: "Tag", Value: statusString("latestRef", "tag")},
		},
		noSuspended: true,
		success: func(u *unstructured.Unstructured) string {
			return "selected ref " + LatestRef(u)
		},
	}
	ImageUpdateAutomation = Kind{
		Kind: imagev1.ImageUpdateAutomationKind, GroupVersion: imagev1.GroupVersion,
		Noun: "image update", Use: "update", GetUse: "update", Image: true,
		origin:  refOrigin("spec", "sourceRef"),
		columns: []Column{{Header: "Last run", Value: timeString("status", "lastAutomationRunTime")}},
		success: imageUpdateSuccess,
	}
)

// Artifacts lists the kinds below `get artifacts`.
var Artifacts = []Kind{ArtifactGenerator}

// Images lists the image kinds in the order `get images all` prints them.
var Images = []Kind{ImageRepository, ImagePolicy, ImageUpdateAutomation}

// staticKind describes a kind without a reconciler, in the flux CLI's words.
func staticKind(kind string, gv schema.GroupVersion, use, getUse string) Kind {
	return Kind{
		Kind: kind, GroupVersion: gv, Noun: use, Use: use, GetUse: getUse,
		completed:    kind + " reconciliation completed",
		readyMessage: kind + " is Ready",
		static:       func(*unstructured.Unstructured) bool { return true },
	}
}

// Sources lists the source kinds in the order `get sources all` prints them
// (the flux CLI's order).
var Sources = []Kind{OCIRepository, Bucket, GitRepository, HelmRepository, HelmChart, ExternalArtifact}

// All lists every kind in the order `get all` prints them: the flux CLI
// lists receivers, alert providers and alerts after the kustomizations.
// The image kinds come last, as `flux get all` prints them; the
// ArtifactGenerators, which read the sources and feed the appliers, come
// between the sources and the HelmReleases.
var All = append(append(append(append([]Kind{}, Sources...), Artifacts...), HelmRelease, Kustomization, Receiver,
	Provider, Alert), Images...)

// ByKind finds a kind by its API kind name, ignoring case.
func ByKind(kind string) (Kind, bool) {
	for _, k := range All {
		if strings.EqualFold(k.Kind, kind) {
			return k, true
		}
	}
	return Kind{}, false
}

// GVK is the group, version and kind.
func (k Kind) GVK() schema.GroupVersionKind { return k.GroupVersion.WithKind(k.Kind) }

// New returns an empty object of the kind, to Get into.
func (k Kind) New() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.GVK())
	return u
}

// NewList returns an empty list of the kind, to List into.
func (k Kind) NewList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(k.GroupVersion.WithKind(k.Kind + "List"))
	return l
}

// HasRevision reports whether the kind's table has a REVISION column.
func (k Kind) HasRevision() bool { return k.revision != nil }

// Columns are the kind's own columns, in place of REVISION; nil for most.
func (k Kind) Columns() []Column { return k.columns }

// HasSuspended reports whether the kind's table has a SUSPENDED column.
func (k Kind) HasSuspended() bool { return !k.noSuspended }

// Parent is the command the kind's subcommands sit below: "source",
// "image", "artifact", or "" for the kinds directly under the verb.
func (k Kind) Parent() string {
	switch {
	case k.Source:
		return "source"
	case k.Image:
		return "image"
	case k.Artifact:
		return "artifact"
	}
	return ""
}

// CommandPath is the kind's words after a verb: "source git", "image
// policy", "kustomization".
func (k Kind) CommandPath() string {
	if p := k.Parent(); p != "" {
		return p + " " + k.Use
	}
	return k.Use
}

// Revision is what the REVISION column shows for u, in full; "" for a kind
// without one.
func (k Kind) Revision(u *unstructured.Unstructured) string {
	if k.revision == nil {
		return ""
	}
	return k.revision(u)
}

// SuccessMessage is what `reconcile` and `resume` print once u is ready:
// "fetched revision main@sha1:…" for sources, "applied revision …" for
// Kustomizations and HelmReleases, a fixed text for Receivers.
func (k Kind) SuccessMessage(u *unstructured.Unstructured) string {
	if k.success != nil {
		return k.success(u)
	}
	if k.completed != "" {
		return k.completed
	}
	return fmt.Sprintf("%s revision %s", k.verb, k.Revision(u))
}

// Static reports whether u has no reconciler to wait for.
func (k Kind) Static(u *unstructured.Unstructured) bool { return k.static != nil && k.static(u) }

// HasOrigin reports whether `get -o wide` has a SOURCE column for the kind.
func (k Kind) HasOrigin() bool { return k.origin != nil }

// Origin is where u takes its content from, for `get -o wide`: a URL for
// most sources, Kind/namespace/name of the source for Kustomizations and
// HelmReleases; "" for a kind that reads from nowhere.
func (k Kind) Origin(u *unstructured.Unstructured) string {
	if k.origin == nil {
		return ""
	}
	return k.origin(u)
}

func artifactRevision(u *unstructured.Unstructured) string {
	rev, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "revision")
	return rev
}

func statusString(fields ...string) func(*unstructured.Unstructured) string {
	return func(u *unstructured.Unstructured) string {
		s, _, _ := unstructured.NestedString(u.Object, append([]string{"status"}, fields...)...)
		return s
	}
}

// timeString shows the timestamp at path in RFC 3339 in the local zone, as
// the flux CLI formats LAST SCAN and LAST RUN; "" when unset.
func timeString(path ...string) func(*unstructured.Unstructured) string {
	return func(u *unstructured.Unstructured) string {
		s, _, _ := unstructured.NestedString(u.Object, path...)
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return s
		}
		return t.Local().Format(time.RFC3339)
	}
}

// LatestRef is an ImagePolicy's status.latestRef as name:tag[@digest], or
// "" before any image is elected.
func LatestRef(u *unstructured.Unstructured) string {
	ref, ok, _ := unstructured.NestedStringMap(u.Object, "status", "latestRef")
	if !ok || ref["name"] == "" {
		return ""
	}
	s := ref["name"] + ":" + ref["tag"]
	if ref["digest"] != "" {
		s += "@" + ref["digest"]
	}
	return s
}

// imageUpdateSuccess is the flux CLI's message after reconciling an
// ImageUpdateAutomation: the Ready message, else the last run time.
func imageUpdateSuccess(u *unstructured.Unstructured) string {
	if c := Condition(u, meta.ReadyCondition); c != nil {
		return c.Message
	}
	if t := timeString("status", "lastAutomationRunTime")(u); t != "" {
		return "last run " + t
	}
	return "automation not yet run"
}

func specString(field string) func(*unstructured.Unstructured) string {
	return func(u *unstructured.Unstructured) string {
		s, _, _ := unstructured.NestedString(u.Object, "spec", field)
		return s
	}
}

// helmReleaseRevision is the chart version of the newest release, or the
// last attempted one before any release, as the flux CLI shows it.
func helmReleaseRevision(u *unstructured.Unstructured) string {
	history, _, _ := unstructured.NestedSlice(u.Object, "status", "history")
	if len(history) > 0 {
		if latest, ok := history[0].(map[string]any); ok {
			if v, ok := latest["chartVersion"].(string); ok {
				return v
			}
		}
	}
	return statusString("lastAttemptedRevision")(u)
}

func bucketOrigin(u *unstructured.Unstructured) string {
	endpoint, _, _ := unstructured.NestedString(u.Object, "spec", "endpoint")
	bucket, _, _ := unstructured.NestedString(u.Object, "spec", "bucketName")
	return endpoint + "/" + bucket
}

// refOrigin formats a source reference at path as Kind/namespace/name, the
// namespace defaulting to the object's.
func refOrigin(path ...string) func(*unstructured.Unstructured) string {
	return func(u *unstructured.Unstructured) string {
		ref, ok, _ := unstructured.NestedStringMap(u.Object, path...)
		if !ok {
			return ""
		}
		ns := ref["namespace"]
		if ns == "" {
			ns = u.GetNamespace()
		}
		return ref["kind"] + "/" + ns + "/" + ref["name"]
	}
}

func helmReleaseOrigin(u *unstructured.Unstructured) string {
	if o := refOrigin("spec", "chartRef")(u); o != "" {
		return o
	}
	return refOrigin("spec", "chart", "spec", "sourceRef")(u)
}

// SourceRef returns the kind, namespace and name of the source u (a
// Kustomization) reads, for `reconcile kustomization --with-source`.
func SourceRef(u *unstructured.Unstructured) (Kind, string, string, error) {
	ref, ok, _ := unstructured.NestedStringMap(u.Object, "spec", "sourceRef")
	if !ok {
		return Kind{}, "", "", fmt.Errorf("%s %s/%s has no spec.sourceRef", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	k, known := ByKind(ref["kind"])
	if !known || !k.Source {
		return Kind{}, "", "", fmt.Errorf("%s %s/%s: source kind %q is not supported", u.GetKind(), u.GetNamespace(), u.GetName(), ref["kind"])
	}
	ns := ref["namespace"]
	if ns == "" {
		ns = u.GetNamespace()
	}
	return k, ns, ref["name"], nil
}

// Suspended reports spec.suspend, or for an ArtifactGenerator (which has
// none) whether its reconcile annotation says disabled, as source-watcher
// and the flux CLI read it.
func Suspended(u *unstructured.Unstructured) bool { return objectstate.IsSuspended(u) }

// SetSuspended suspends or resumes u in memory (as Suspended reads it), for a patch: spec.suspend
// true, or removed on resume, as the flux CLI writes it; an
// ArtifactGenerator's reconcile annotation set to disabled or enabled.
func SetSuspended(u *unstructured.Unstructured, suspend bool) {
	if u.GetKind() == ArtifactGenerator.Kind {
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[sourceextensionsv1beta1.ReconcileAnnotation] = sourceextensionsv1beta1.EnabledValue
		if suspend {
			ann[sourceextensionsv1beta1.ReconcileAnnotation] = sourceextensionsv1beta1.DisabledValue
		}
		u.SetAnnotations(ann)
		return
	}
	if suspend {
		_ = unstructured.SetNestedField(u.Object, true, "spec", "suspend")
		return
	}
	unstructured.RemoveNestedField(u.Object, "spec", "suspend")
}

// externalArtifactSource is an ExternalArtifact's spec.sourceRef as
// Kind/namespace/name, "" without one.
func externalArtifactSource(u *unstructured.Unstructured) string {
	ref, ok, _ := unstructured.NestedStringMap(u.Object, "spec", "sourceRef")
	if !ok {
		return ""
	}
	return ref["kind"] + "/" + ref["namespace"] + "/" + ref["name"]
}

// readyMessage is the Ready condition's message, or "" without one.
func readyMessage(u *unstructured.Unstructured) string {
	if c := Condition(u, meta.ReadyCondition); c != nil {
		return c.Message
	}
	return ""
}

// SourceObject is one object a Kustomization or HelmRelease reads from.
type SourceObject struct {
	Kind            Kind
	Namespace, Name string
}

// SourcesOf lists the objects u takes its content from, in the order
// `reconcile --with-source` reconciles them: a Kustomization's source; for a
// HelmRelease, the object its chartRef names, or the source of its chart
// template and then the HelmChart the controller makes from it
// (<namespace>-<name>, in the source's namespace), as the flux CLI does.
func SourcesOf(u *unstructured.Unstructured) ([]SourceObject, error) {
	if u.GetKind() != HelmRelease.Kind {
		sk, sns, sname, err := SourceRef(u)
		if err != nil {
			return nil, err
		}
		return []SourceObject{{sk, sns, sname}}, nil
	}
	ref := func(path ...string) (SourceObject, bool, error) {
		m, ok, _ := unstructured.NestedStringMap(u.Object, path...)
		if !ok || m["name"] == "" {
			return SourceObject{}, false, nil
		}
		sk, known := ByKind(m["kind"])
		if !known || !sk.Source {
			return SourceObject{}, false, fmt.Errorf("HelmRelease %s/%s: source kind %q is not supported", u.GetNamespace(), u.GetName(), m["kind"])
		}
		ns := m["namespace"]
		if ns == "" {
			ns = u.GetNamespace()
		}
		return SourceObject{sk, ns, m["name"]}, true, nil
	}
	if s, ok, err := ref("spec", "chartRef"); ok || err != nil {
		return []SourceObject{s}, err
	}
	s, ok, err := ref("spec", "chart", "spec", "sourceRef")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("HelmRelease %s/%s has neither spec.chartRef nor spec.chart", u.GetNamespace(), u.GetName())
	}
	return []SourceObject{s, {HelmChart, s.Namespace, u.GetNamespace() + "-" + u.GetName()}}, nil
}

// Reconcilable lists the kinds that suspend, resume, reconcile, export and
// delete act on, in help order.
var Reconcilable = []Kind{GitRepository, OCIRepository, Bucket, HelmRepository, HelmChart, ArtifactGenerator,
	Kustomization, HelmRelease, Receiver, Provider, Alert, ImageRepository, ImagePolicy, ImageUpdateAutomation}

// Exportable lists the kinds `export` prints: the reconcilable ones and
// ExternalArtifact, which the flux CLI exports (`export source external`)
// but neither suspends nor reconciles.
var Exportable = []Kind{GitRepository, OCIRepository, Bucket, HelmRepository, HelmChart, ExternalArtifact,
	ArtifactGenerator, Kustomization, HelmRelease, Receiver, Provider, Alert, ImageRepository, ImagePolicy,
	ImageUpdateAutomation}
