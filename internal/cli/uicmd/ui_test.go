package uicmd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }

// TestUIServesWithTheKubeconfig runs `weir ui`, opens the URL it prints
// and asks who is logged in.
func TestUIServesWithTheKubeconfig(t *testing.T) {
	env := testenv.Get(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, testenv.KubeConfig(t, env.Config, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	out, outW := io.Pipe()
	var errOut strings.Builder
	root := cli.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: outW, ErrOut: &errOut})
	root.SetArgs([]string{"ui", "--kubeconfig", kubeconfig})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(url)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("weir ui printed %q", url)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `<script type="module" src="/js/main.js">`) {
		t.Errorf("GET %s: %s %s", url, resp.Status, page)
	}
	base := url[:strings.Index(url, "/?")]
	resp, err = c.Get(base + "/api/whoami")
	if err != nil {
		t.Fatal(err)
	}
	var who struct{ User, Mode string }
	_ = json.NewDecoder(resp.Body).Decode(&who)
	resp.Body.Close()
	if who.User == "" || who.Mode != "local" {
		t.Errorf("whoami = %+v (%s)", who, resp.Status)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("weir ui: %v", err)
	}
	if !strings.Contains(errOut.String(), "✔ serving the UI for") || strings.Contains(errOut.String(), "token=") {
		t.Errorf("stderr: %q", errOut.String())
	}
}
