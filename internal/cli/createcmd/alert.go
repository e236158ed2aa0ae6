package createcmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/commitstatus"
	"github.com/weir-gitops/weir/internal/notification/notifier/gitcomment"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// providerTypes are the values --type of `create alert-provider` accepts:
// every Provider type of the API. The list is checked here rather than left
// to the API server so that --export catches a typo too.
var providerTypes = []string{
	notificationv1beta3.SlackProvider, notificationv1beta3.DiscordProvider, notificationv1beta3.MSTeamsProvider,
	notificationv1beta3.RocketProvider, notificationv1beta3.GenericProvider, notificationv1beta3.GenericHMACProvider,
	notificationv1beta3.GitHubProvider, notificationv1beta3.GitLabProvider, notificationv1beta3.GiteaProvider,
	notificationv1beta3.GiteaPullRequestCommentProvider, notificationv1beta3.BitbucketServerProvider,
	notificationv1beta3.BitbucketProvider, notificationv1beta3.AzureDevOpsProvider, notificationv1beta3.GoogleChatProvider,
	notificationv1beta3.GooglePubSubProvider, notificationv1beta3.WebexProvider, notificationv1beta3.SentryProvider,
	notificationv1beta3.AzureEventHubProvider, notificationv1beta3.TelegramProvider, notificationv1beta3.LarkProvider,
	notificationv1beta3.MatrixProvider, notificationv1beta3.OpsgenieProvider, notificationv1beta3.AlertManagerProvider,
	notificationv1beta3.GrafanaProvider, notificationv1beta3.GitHubDispatchProvider,
	notificationv1beta3.GitHubPullRequestCommentProvider, notificationv1beta3.GitLabMergeRequestCommentProvider,
	notificationv1beta3.PagerDutyProvider, notificationv1beta3.DataDogProvider, notificationv1beta3.NATSProvider,
	notificationv1beta3.ZulipProvider, notificationv1beta3.OTELProvider, notificationv1beta3.ZoomProvider,
	notificationv1beta3.IncidentIOProvider,
}

type alertProviderOptions struct {
	providerType, channel, username, address, secretRef string
}

func newAlertProviderCommand(e *env) *cobra.Command {
	o := &alertProviderOptions{}
	cmd := &cobra.Command{
		Use:   "alert-provider [name]",
		Short: "Create or update a Provider resource",
		Long: `The create alert-provider command generates a Provider resource: where Alerts send the
events they select, and how. A Provider has no controller of its own, so it is ready as
soon as it is applied.`,
		Example: `  # Create a Provider that posts to a Slack channel, the webhook URL in a Secret
  weir create alert-provider slack \
    --type slack \
    --channel general \
    --secret-ref slack-webhook

  # Create a Provider that sets commit statuses on a GitHub repository
  weir create alert-provider github-webapp \
    --type github \
    --address https://github.com/example/webapp \
    --secret-ref github-token`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createAlertProvider(c, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.providerType, "type", "", "type of provider, e.g. slack, msteams, github, generic")
	f.StringVar(&o.channel, "channel", "", "channel to post to, for chat providers")
	f.StringVar(&o.username, "username", "", "name the provider posts as")
	f.StringVar(&o.address, "address", "", "URL of the chat webhook, the Git repository or the endpoint events go to")
	f.StringVar(&o.secretRef, "secret-ref", "", "name of the Secret holding the provider's token or address")
	return cmd
}

func (e *env) createAlertProvider(c *cobra.Command, name string, o *alertProviderOptions) error {
	if o.providerType == "" {
		return fmt.Errorf("%s type is required", notificationv1beta3.ProviderKind)
	}
	if !slices.Contains(providerTypes, o.providerType) {
		return fmt.Errorf("unsupported provider type '%s', must be one of: %s", o.providerType, strings.Join(providerTypes, ", "))
	}
	if err := checkProviderFields(o); err != nil {
		return err
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	if !e.o.export {
		e.p.Generatef("generating %s", notificationv1beta3.ProviderKind)
	}
	p := &notificationv1beta3.Provider{
		TypeMeta:   metav1.TypeMeta{APIVersion: notificationv1beta3.GroupVersion.String(), Kind: notificationv1beta3.ProviderKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: notificationv1beta3.ProviderSpec{
			Type: o.providerType, Channel: o.channel, Username: o.username, Address: o.address,
		},
	}
	if o.secretRef != "" {
		p.Spec.SecretRef = &meta.LocalObjectReference{Name: o.secretRef}
	}
	return e.applyStatic(c, kinds.Provider, p)
}

// checkProviderFields refuses a Git host Provider that could never post:
// a commit-status, dispatch or comment type needs the repository's
// address and a Secret with the token (or, for the GitHub types, GitHub
// App credentials).
func checkProviderFields(o *alertProviderOptions) error {
	var check func(kind, address string) error
	switch {
	case notificationv1beta3.IsCommitStatusProvider(o.providerType):
		check = commitstatus.CheckAddress
	case slices.Contains(gitcomment.Types, o.providerType):
		check = gitcomment.CheckAddress
	default:
		return nil
	}
	if o.address == "" {
		return fmt.Errorf("%s provider needs --address, the URL of the Git repository", o.providerType)
	}
	if err := check(o.providerType, o.address); err != nil {
		return fmt.Errorf("invalid --address %s: %s", o.address, strings.TrimPrefix(err.Error(), notifier.ErrInvalidConfig.Error()+": "))
	}
	if o.secretRef == "" {
		return fmt.Errorf("%s provider needs --secret-ref, a Secret with the token to %s", o.providerType, secretUse(o.providerType))
	}
	return nil
}

// secretUse says what a Git host Provider's token is for.
func secretUse(kind string) string {
	switch {
	case notificationv1beta3.IsCommitStatusProvider(kind):
		return "set commit statuses"
	case kind == notificationv1beta3.GitHubDispatchProvider:
		return "dispatch repository events"
	default:
		return "comment on pull and merge requests"
	}
}

type alertOptions struct {
	providerRef   string
	eventSeverity *enum
	eventSources  []string
}

func newAlertCommand(e *env) *cobra.Command {
	o := &alertOptions{eventSeverity: newEnum("", "event severity", "info", "error")}
	cmd := &cobra.Command{
		Use:   "alert [name]",
		Short: "Create or update an Alert resource",
		Long: `The create alert command generates an Alert resource: which events, by the objects they are
about and their severity, go to a Provider. Each --event-source is <kind>/<name> or
<kind>/<name>.<namespace>; the name "*" selects every object of the kind.`,
		Example: `  # Send the errors of every Kustomization and of one GitRepository to Slack
  weir create alert apps \
    --provider-ref slack \
    --event-severity error \
    --event-source 'Kustomization/*' \
    --event-source GitRepository/webapp`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createAlert(c, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.providerRef, "provider-ref", "", "name of the Provider, in the Alert's namespace, that events go to")
	f.Var(o.eventSeverity, "event-severity", "least severity of the events to send: info sends all, error only errors")
	f.StringSliceVar(&o.eventSources, "event-source", nil,
		"objects whose events to send, as <kind>/<name>[.<namespace>]; also accepts comma-separated values")
	return cmd
}

func (e *env) createAlert(c *cobra.Command, name string, o *alertOptions) error {
	if o.providerRef == "" {
		return fmt.Errorf("provider ref is required")
	}
	var sources []notificationv1.CrossNamespaceObjectReference
	for _, s := range o.eventSources {
		// Alerts name the kinds a Receiver may: Flux's objects that emit events.
		ref, err := objectRef(s, "event source", receiverResourceKinds)
		if err != nil {
			return err
		}
		// The flux CLI writes no apiVersion: an Alert matches events by kind.
		ref.APIVersion = ""
		sources = append(sources, ref)
	}
	if len(sources) == 0 {
		return fmt.Errorf("at least one event source is required")
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	if !e.o.export {
		e.p.Generatef("generating %s", notificationv1beta3.AlertKind)
	}
	a := &notificationv1beta3.Alert{
		TypeMeta:   metav1.TypeMeta{APIVersion: notificationv1beta3.GroupVersion.String(), Kind: notificationv1beta3.AlertKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: notificationv1beta3.AlertSpec{
			ProviderRef:   meta.LocalObjectReference{Name: o.providerRef},
			EventSeverity: o.eventSeverity.value,
			EventSources:  sources,
		},
	}
	return e.applyStatic(c, kinds.Alert, a)
}

// applyStatic exports obj, or applies it and reports it ready: the object
// of a static kind is ready once the API server holds it.
func (e *env) applyStatic(c *cobra.Command, k kinds.Kind, obj client.Object) error {
	if e.o.export {
		return e.export(obj)
	}
	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	_, err = e.applyAndWait(ctx, cl, k, k.Kind, obj, fmt.Sprintf("%s %s is ready", k.Kind, obj.GetName()))
	return err
}
