package createcmd

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// receiverTypes are the values --type accepts: every Receiver type that
// authenticates with a token Secret. generic-oidc takes OIDC providers
// instead, which the command line cannot describe.
var receiverTypes = []string{
	notificationv1.GenericReceiver, notificationv1.GenericHMACReceiver, notificationv1.GitHubReceiver,
	notificationv1.GitLabReceiver, notificationv1.BitbucketReceiver, notificationv1.HarborReceiver,
	notificationv1.DockerHubReceiver, notificationv1.QuayReceiver, notificationv1.GCRReceiver,
	notificationv1.NexusReceiver, notificationv1.ACRReceiver, notificationv1.CDEventsReceiver,
}

// receiverResourceKinds are the kinds a Receiver may ask to reconcile (the
// CRD's enum), with the apiVersion written for each.
var receiverResourceKinds = map[string]string{
	sourcev1.BucketKind:                           sourcev1.GroupVersion.String(),
	sourcev1.GitRepositoryKind:                    sourcev1.GroupVersion.String(),
	sourcev1.HelmChartKind:                        sourcev1.GroupVersion.String(),
	sourcev1.HelmRepositoryKind:                   sourcev1.GroupVersion.String(),
	sourcev1.OCIRepositoryKind:                    sourcev1.GroupVersion.String(),
	sourcev1.ExternalArtifactKind:                 sourcev1.GroupVersion.String(),
	kustomizev1.KustomizationKind:                 kustomizev1.GroupVersion.String(),
	helmv2.HelmReleaseKind:                        helmv2.GroupVersion.String(),
	imagev1.ImageRepositoryKind:                   imagev1.GroupVersion.String(),
	imagev1.ImagePolicyKind:                       imagev1.GroupVersion.String(),
	imagev1.ImageUpdateAutomationKind:             imagev1.GroupVersion.String(),
	sourceextensionsv1beta1.ArtifactGeneratorKind: sourceextensionsv1beta1.GroupVersion.String(),
}

// receiverResource parses one --resource: Kind/name or Kind/name.namespace,
// the kind matched ignoring case; name (and namespace) may be "*".
func receiverResource(s string) (notificationv1.ReceiverResource, error) {
	ref, err := objectRef(s, "resource", receiverResourceKinds)
	return notificationv1.ReceiverResource{CrossNamespaceObjectReference: ref}, err
}

// objectRef parses a reference flag (what names it in messages): Kind/name
// or Kind/name.namespace, the kind one of known's keys ignoring case and
// written with its apiVersion; name (and namespace) may be "*".
func objectRef(s, what string, known map[string]string) (notificationv1.CrossNamespaceObjectReference, error) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || kind == "" || name == "" || strings.Contains(name, "/") {
		return notificationv1.CrossNamespaceObjectReference{}, fmt.Errorf("invalid %s '%s', must be in format <kind>/<name> or <kind>/<name>.<namespace>", what, s)
	}
	var ref notificationv1.CrossNamespaceObjectReference
	for k, apiVersion := range known {
		if strings.EqualFold(k, kind) {
			ref.Kind, ref.APIVersion = k, apiVersion
		}
	}
	if ref.Kind == "" {
		names := make([]string, 0, len(known))
		for k := range known {
			names = append(names, k)
		}
		slices.Sort(names)
		return notificationv1.CrossNamespaceObjectReference{}, fmt.Errorf("%s kind '%s' is not supported, must be one of: %s", what, kind, strings.Join(names, ", "))
	}
	ref.Name = name
	if i := strings.LastIndex(name, "."); i > 0 && i < len(name)-1 {
		ref.Name, ref.Namespace = name[:i], name[i+1:]
	}
	return ref, nil
}

type receiverOptions struct {
	receiverType *enum
	secretRef    string
	events       []string
	resources    []string
}

func newReceiverCommand(e *env) *cobra.Command {
	o := &receiverOptions{receiverType: newEnum("", "receiver type", receiverTypes...)}
	cmd := &cobra.Command{
		Use:   "receiver [name]",
		Short: "Create or update a Receiver resource",
		Long: `The create receiver command generates a Receiver resource: a webhook that asks the given
resources to reconcile when the sender calls it. Each --resource is <kind>/<name> or
<kind>/<name>.<namespace>; the name "*" selects every object of the kind.`,
		Example: `  # Create a Receiver for GitHub push events
  weir create receiver github-receiver \
    --type github \
    --event ping \
    --event push \
    --secret-ref webhook-token \
    --resource GitRepository/webapp \
    --resource HelmRepository/webapp`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createReceiver(c, args[0], o) },
	}
	f := cmd.Flags()
	f.Var(o.receiverType, "type", "who calls the webhook, which decides how requests are verified")
	f.StringVar(&o.secretRef, "secret-ref", "", "name of the Secret whose 'token' key authenticates the webhook's callers")
	f.StringSliceVar(&o.events, "event", nil, "event type to act on, e.g. 'push' for GitHub (all when none given); also accepts comma-separated values")
	f.StringSliceVar(&o.resources, "resource", nil, "object to reconcile, as <kind>/<name>[.<namespace>]; also accepts comma-separated values")
	return cmd
}

func (e *env) createReceiver(c *cobra.Command, name string, o *receiverOptions) error {
	if o.receiverType.value == "" {
		return fmt.Errorf("%s type is required", notificationv1.ReceiverKind)
	}
	if o.secretRef == "" {
		return fmt.Errorf("secret ref is required")
	}
	var resources []notificationv1.ReceiverResource
	for _, r := range o.resources {
		res, err := receiverResource(r)
		if err != nil {
			return err
		}
		resources = append(resources, res)
	}
	if len(resources) == 0 {
		return fmt.Errorf("at least one resource is required")
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	if !e.o.export {
		e.p.Generatef("generating Receiver")
	}
	rcv := &notificationv1.Receiver{
		TypeMeta:   metav1.TypeMeta{APIVersion: notificationv1.GroupVersion.String(), Kind: notificationv1.ReceiverKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: notificationv1.ReceiverSpec{
			Type:      o.receiverType.value,
			Events:    o.events,
			Resources: resources,
			SecretRef: &meta.LocalObjectReference{Name: o.secretRef},
		},
	}
	// The flux CLI leaves the interval to the CRD's default (10m); an
	// explicit --interval is kept.
	if c.Flags().Changed("interval") {
		rcv.Spec.Interval = &metav1.Duration{Duration: e.o.interval}
	}
	if e.o.export {
		return e.export(rcv)
	}
	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	ready, err := e.applyAndWait(ctx, cl, kinds.Receiver, "Receiver", rcv, fmt.Sprintf("Receiver %s is ready", name))
	if err != nil {
		return err
	}
	path, _, _ := unstructured.NestedString(ready.Object, "status", "webhookPath")
	e.p.Successf("generated webhook URL %s", path)
	return nil
}

// webhookAnnotation is where `create secret receiver` records the webhook
// URL, under the flux CLI's key.
const webhookAnnotation = "notification.toolkit.fluxcd.io/webhook"

// Keys of a Receiver's Secret.
const (
	receiverTokenKey    = "token"
	receiverEmailKey    = "email"    // gcr: the service account the push tokens name
	receiverAudienceKey = "audience" // gcr: the audience the push tokens carry
)

type secretReceiverOptions struct {
	receiverType              *enum
	token, hostname           string
	emailClaim, audienceClaim string
}

func newSecretReceiverCommand(e *env) *cobra.Command {
	o := &secretReceiverOptions{receiverType: newEnum("", "receiver type", receiverTypes...)}
	cmd := &cobra.Command{
		Use:   "receiver [name]",
		Short: "Create or update a Kubernetes secret for a Receiver webhook",
		Long: `The create secret receiver command generates a Kubernetes secret with the token the Receiver
checks its callers with (a random one unless --token is given) and an annotation with the
webhook URL. The URL is computed for a Receiver of the same name and namespace as the secret.`,
		Example: `  # Create a receiver secret for a GitHub webhook
  weir create secret receiver github-receiver \
    --namespace=my-namespace \
    --type=github \
    --hostname=flux.example.com \
    --export

  # Create a receiver secret for GCR, with the service account its push tokens name
  weir create secret receiver gcr-receiver \
    --namespace=my-namespace \
    --type=gcr \
    --hostname=flux.example.com \
    --email-claim=sa@project.iam.gserviceaccount.com \
    --export`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			labels, err := e.labels()
			if err != nil {
				return err
			}
			s, err := receiverSecret(args[0], e.deps.Namespace(), labels, o)
			if err != nil {
				return err
			}
			return e.applySecret(c, s, "receiver")
		},
	}
	f := cmd.Flags()
	f.Var(o.receiverType, "type", "type of the Receiver the secret is for")
	f.StringVar(&o.token, "token", "", "token the webhook's callers authenticate with, random when not given")
	f.StringVar(&o.hostname, "hostname", "", "hostname the webhook is served under, e.g. flux.example.com")
	f.StringVar(&o.emailClaim, "email-claim", "", "IAM service account email, required for the gcr type")
	f.StringVar(&o.audienceClaim, "audience-claim", "", "OIDC token audience for the gcr type, the webhook URL when not given")
	return cmd
}

// receiverSecret builds the Secret of a Receiver called name in ns, with the
// flux CLI's checks and messages.
func receiverSecret(name, ns string, labels map[string]string, o *secretReceiverOptions) (*corev1.Secret, error) {
	switch {
	case o.receiverType.value == "":
		return nil, fmt.Errorf("--type is required")
	case o.hostname == "":
		return nil, fmt.Errorf("--hostname is required")
	case o.receiverType.value == notificationv1.GCRReceiver && o.emailClaim == "":
		return nil, fmt.Errorf("--email-claim is required for gcr receiver type")
	}
	token := o.token
	if token == "" {
		var err error
		if token, err = randomToken(); err != nil {
			return nil, err
		}
	}
	url := webhookURL(o.hostname, notificationv1.WebhookPath(token, name, ns))
	s := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
			Annotations: map[string]string{webhookAnnotation: url}},
		StringData: map[string]string{receiverTokenKey: token},
	}
	if o.receiverType.value == notificationv1.GCRReceiver {
		s.StringData[receiverEmailKey] = o.emailClaim
		s.StringData[receiverAudienceKey] = url
		if o.audienceClaim != "" {
			s.StringData[receiverAudienceKey] = o.audienceClaim
		}
	}
	return s, nil
}

// webhookURL joins the hostname (https unless it names a scheme) and path.
func webhookURL(hostname, path string) string {
	if !strings.Contains(hostname, "://") {
		hostname = "https://" + hostname
	}
	return strings.TrimSuffix(hostname, "/") + path
}

// randomToken is 32 random bytes, hex-encoded: as hard to guess as the
// webhook path it feeds.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
