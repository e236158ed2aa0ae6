package triggercmd

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/version"
)

// Values and defaults of the flags, as in the flux CLI.
const (
	providerGitHub  = "github"
	providerForgejo = "forgejo"
	// defaultOIDCAudience is the audience a generic-oidc Receiver's
	// provider requires unless it names another.
	defaultOIDCAudience = "notification-controller"
	// oidcTokenEnv holds the OIDC token when neither --oidc-provider nor
	// --oidc-token is given (GitLab's id_tokens, for instance).
	oidcTokenEnv = "FLUX_TRIGGER_RECEIVER_OIDC_TOKEN"
	// The variables GitHub and Forgejo Actions set in a job allowed to
	// request an ID token (permissions: id-token: write).
	actionsTokenURLEnv   = "ACTIONS_ID_TOKEN_REQUEST_URL"
	actionsTokenTokenEnv = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
)

// options are the flags of `trigger receiver`.
type options struct {
	url, token, receiverType              string
	oidcProvider, oidcToken, oidcAudience string
	payload                               string
	retries                               int
	retryDelay                            time.Duration
}

// NewCommand returns `weir trigger` with its receiver subcommand.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trigger",
		Short: "Trigger Flux webhooks",
		Long:  "The trigger sub-commands call the incoming webhooks of Flux resources.",
	}
	cmd.AddCommand(newReceiverCommand(streams, deps))
	return cmd
}

func newReceiverCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "receiver [name]",
		Short: "Trigger the webhook of a Receiver",
		Long: `The trigger receiver command sends a request to the incoming webhook of a Receiver.

The command computes the webhook path from the Receiver name, namespace and token,
appends it to the base URL and sends an HTTP POST request with the given payload.
It does not require access to the Kubernetes cluster.`,
		Example: `  # Trigger a generic Receiver
  weir trigger receiver my-receiver \
    --token=my-token \
    --url=https://flux-webhook.example.com

  # Trigger a generic-hmac Receiver with a JSON payload
  weir trigger receiver my-receiver \
    --type=generic-hmac \
    --token=my-token \
    --url=https://flux-webhook.example.com \
    --payload='{"image":"ghcr.io/org/app:v1.0.0"}'

  # Trigger a generic-oidc Receiver from a GitHub Actions job with
  # 'permissions: id-token: write'; the OIDC token is fetched for the job
  weir trigger receiver my-receiver \
    --type=generic-oidc \
    --oidc-provider=github \
    --url=https://flux-webhook.example.com

  # Trigger a generic-oidc Receiver with a token from the CI system, e.g. a
  # GitLab id_token, also read from FLUX_TRIGGER_RECEIVER_OIDC_TOKEN
  weir trigger receiver my-receiver -n apps \
    --type=generic-oidc \
    --oidc-token="${MY_ID_TOKEN}" \
    --url=https://flux-webhook.example.com`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			return run(ctx, output.Progress{W: streams.ErrOut}, args[0], deps.Namespace(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.token, "token", "", "the Receiver token, required for all types except generic-oidc where it must not be set")
	f.StringVar(&o.url, "url", "", "the base URL of the notification-controller webhook receiver, may contain a base path")
	f.StringVar(&o.receiverType, "type", notificationv1.GenericReceiver, fmt.Sprintf("the Receiver type, one of: %s, %s, %s",
		notificationv1.GenericReceiver, notificationv1.GenericHMACReceiver, notificationv1.GenericOIDCReceiver))
	f.StringVar(&o.oidcProvider, "oidc-provider", "", fmt.Sprintf(
		"the OIDC provider to fetch the token from, one of: %s, %s (generic-oidc only, mutually exclusive with --oidc-token)", providerGitHub, providerForgejo))
	f.StringVar(&o.oidcToken, "oidc-token", "", fmt.Sprintf(
		"the OIDC token to authenticate the request (generic-oidc only, mutually exclusive with --oidc-provider); defaults to the %s environment variable", oidcTokenEnv))
	f.StringVar(&o.oidcAudience, "oidc-audience", "", fmt.Sprintf(
		"the audience of the OIDC token to fetch (requires --oidc-provider); defaults to %q", defaultOIDCAudience))
	f.StringVar(&o.payload, "payload", "{}", "the JSON payload to send in the request body")
	f.IntVar(&o.retries, "retries", 10,
		"the number of times to retry on connection errors or retryable HTTP status codes (404, 408, 429, 5xx); set to 0 to disable")
	f.DurationVar(&o.retryDelay, "retry-delay", 10*time.Second, "the delay between retries")
	return cmd
}

// check holds the flags to the flux CLI's rules, with its messages.
func (o *options) check() error {
	if o.url == "" {
		return errors.New("--url is required")
	}
	oidc := o.receiverType == notificationv1.GenericOIDCReceiver
	switch o.receiverType {
	case notificationv1.GenericReceiver, notificationv1.GenericHMACReceiver, notificationv1.GenericOIDCReceiver:
	default:
		return fmt.Errorf("invalid --type %q, must be one of: %s, %s, %s", o.receiverType,
			notificationv1.GenericReceiver, notificationv1.GenericHMACReceiver, notificationv1.GenericOIDCReceiver)
	}
	if !oidc {
		if o.token == "" {
			return fmt.Errorf("--token is required for --type=%s", o.receiverType)
		}
		if o.oidcProvider != "" || o.oidcToken != "" || o.oidcAudience != "" {
			return fmt.Errorf("--oidc-provider, --oidc-token and --oidc-audience can only be set for --type=%s", notificationv1.GenericOIDCReceiver)
		}
		return nil
	}
	switch {
	case o.token != "":
		return fmt.Errorf("--token must not be set for --type=%s, the Receiver of this type has no secret", notificationv1.GenericOIDCReceiver)
	case o.oidcProvider != "" && o.oidcToken != "":
		return errors.New("--oidc-provider and --oidc-token are mutually exclusive")
	case o.oidcProvider != "" && o.oidcProvider != providerGitHub && o.oidcProvider != providerForgejo:
		return fmt.Errorf("invalid --oidc-provider %q, must be one of: %s, %s", o.oidcProvider, providerGitHub, providerForgejo)
	case o.oidcAudience != "" && o.oidcProvider == "":
		return errors.New("--oidc-audience can only be set together with --oidc-provider")
	}
	return nil
}

// run sends the request, retrying what may pass later.
func run(ctx context.Context, p output.Progress, name, ns string, o *options) error {
	if err := o.check(); err != nil {
		return err
	}
	token := o.token
	if o.receiverType == notificationv1.GenericOIDCReceiver {
		token = "" // the path of a Receiver without a Secret
	}
	path := notificationv1.WebhookPath(token, name, ns)
	webhook := strings.TrimRight(o.url, "/") + path
	secrets := []string{strings.TrimPrefix(path, notificationv1.WebhookPathPrefix)}
	if o.token != "" {
		secrets = append(secrets, o.token)
	}
	payload := []byte(o.payload)
	headers := map[string]string{"Content-Type": "application/json", "User-Agent": "weir/" + version.Version}
	switch o.receiverType {
	case notificationv1.GenericHMACReceiver:
		mac := hmac.New(sha256.New, []byte(o.token))
		mac.Write(payload)
		headers["X-Signature"] = "sha256=" + hex.EncodeToString(mac.Sum(nil))
	case notificationv1.GenericOIDCReceiver:
		tok, err := o.oidcBearer(ctx)
		if err != nil {
			return notifier.Scrub(err, secrets)
		}
		secrets = append(secrets, tok)
		headers["Authorization"] = "Bearer " + tok
	}

	p.Actionf("triggering Receiver %s/%s", ns, name)
	for attempt := 0; ; attempt++ {
		retryable, err := send(ctx, webhook, payload, headers)
		if err == nil {
			p.Successf("Receiver %s/%s triggered", ns, name)
			return nil
		}
		err = notifier.Scrub(err, secrets)
		if !retryable || attempt >= o.retries {
			return err
		}
		p.Waitingf("%s; retrying in %s (%d/%d)", err, o.retryDelay, attempt+1, o.retries)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.retryDelay):
		}
	}
}

// send makes one attempt and says whether a failure may pass on retry:
// connection errors, and the answers of a Receiver not served yet (404)
// or busy (408, 429, 5xx). Refused credentials and payloads fail at once.
func send(ctx context.Context, webhook string, payload []byte, headers map[string]string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, webhook, bytes.NewReader(payload))
	if err != nil {
		return false, fmt.Errorf("unable to create request: %w", err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return true, fmt.Errorf("request to %s failed: %w", webhook, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, nil
	}
	err = fmt.Errorf("request to %s failed with status %s", webhook, resp.Status)
	if msg := strings.TrimSpace(string(body)); msg != "" {
		err = fmt.Errorf("request to %s failed with status %s: %s", webhook, resp.Status, msg)
	}
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, err
	}
	return false, err
}

// unwrapURLError drops net/http's "Post <url>:" prefix, which repeats the
// URL the message already names.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// oidcBearer returns the OIDC token of a generic-oidc request: fetched
// from the Actions runtime with --oidc-provider, else --oidc-token, else
// the environment.
func (o *options) oidcBearer(ctx context.Context) (string, error) {
	switch {
	case o.oidcProvider != "":
		aud := o.oidcAudience
		if aud == "" {
			aud = defaultOIDCAudience
		}
		return actionsToken(ctx, aud)
	case o.oidcToken != "":
		return o.oidcToken, nil
	}
	if tok := os.Getenv(oidcTokenEnv); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("no OIDC token provided: set --oidc-provider, --oidc-token or the %s environment variable", oidcTokenEnv)
}

// actionsToken asks the GitHub or Forgejo Actions runtime for an ID token
// for audience: GET on ACTIONS_ID_TOKEN_REQUEST_URL with the audience
// parameter, authorised by ACTIONS_ID_TOKEN_REQUEST_TOKEN; the answer is
// {"value": "<JWT>"}.
func actionsToken(ctx context.Context, audience string) (string, error) {
	reqURL, reqToken := os.Getenv(actionsTokenURLEnv), os.Getenv(actionsTokenTokenEnv)
	if reqURL == "" || reqToken == "" {
		return "", fmt.Errorf("%s and %s are not set: the job needs the permission 'id-token: write'", actionsTokenURLEnv, actionsTokenTokenEnv)
	}
	u, err := url.Parse(reqURL)
	if err != nil {
		return "", fmt.Errorf("parsing %s: %w", actionsTokenURLEnv, err)
	}
	q := u.Query()
	q.Set("audience", audience)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("unable to create the ID token request: %w", err)
	}
	req.Header.Set("Authorization", "bearer "+reqToken)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", notifier.Scrub(fmt.Errorf("requesting an ID token: %w", unwrapURLError(err)), []string{reqToken})
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("requesting an ID token: status %s", resp.Status)
	}
	var answer struct {
		Value string `json:"value"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&answer); err != nil || answer.Value == "" {
		return "", errors.New("requesting an ID token: the answer holds no token")
	}
	return answer.Value, nil
}
