package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
	"github.com/kobana/workflow/mcpserver/store/storetest"
)

// Backup copies the store while it is written to: the copy opens, holds
// every record committed before it and the sealed secrets, which the key
// opens; the store's own secret key, when it kept one, is nowhere in the
// copy's bytes, so the copy's secrets open only with the key from outside.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte{7}, store.SecretKeySize)
	dir := t.TempDir()
	// A store that once kept its own key, now given one from outside (as
	// after kobana admin rotate-secret-key).
	kept, err := sqlite.Open(ctx, filepath.Join(dir, "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	own, err := kept.SigningKey(ctx, store.SecretsKeyPurpose)
	if err != nil {
		t.Fatal(err)
	}
	kept.Close()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "s.db"), store.Options{SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.SeedIdentity(t, st)
	if err := st.SetSecret(ctx, "w1", "ERP_TOKEN", "tok-backup-1"); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "note", ID: fmt.Sprint("before-", i), Data: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // writers go on while the copy is made
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			st.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "note", ID: fmt.Sprint("during-", i), Data: []byte(`{}`)})
		}
	}()
	copyPath := filepath.Join(dir, "backup.db")
	err = st.Backup(ctx, copyPath)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Backup(ctx, copyPath); err == nil {
		t.Error("a backup over an existing file")
	}
	raw, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, own.Secret) {
		t.Fatal("the copy holds the store's own secret key")
	}
	restored, err := sqlite.Open(ctx, copyPath, store.Options{SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	for i := range 200 {
		if _, err := restored.GetRecord(ctx, "w1", "note", fmt.Sprint("before-", i)); err != nil {
			t.Fatalf("record before-%d, written before the copy: %v", i, err)
		}
	}
	if got, err := restored.RevealSecrets(ctx, "w1"); err != nil || got["ERP_TOKEN"] != "tok-backup-1" {
		t.Errorf("the copy's secrets with the key: %v %v", got, err)
	}
	if err := restored.CheckSecretKey(ctx); err != nil {
		t.Errorf("CheckSecretKey on the copy: %v", err)
	}
	// Without the key the copy's secrets do not open.
	nokey, err := sqlite.Open(ctx, copyPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer nokey.Close()
	if err := nokey.CheckSecretKey(ctx); !errors.Is(err, store.ErrNoSecretKey) {
		t.Errorf("the copy's secrets without the key: %v", err)
	}
}
