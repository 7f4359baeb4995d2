// Command carecircle-ferretdb runs FerretDB v1 (MongoDB wire protocol over SQLite) for local
// runs and tests on machines that cannot download a MongoDB binary.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("sqlite-dir", "data", "directory holding the SQLite databases")
	level := flag.String("log-level", "warn", "debug, info, warn or error")
	// WAL with synchronous=NORMAL survives a crash of this process (SQLite's documented
	// guarantee); only a power loss can lose the last commits. Local runs and tests want speed.
	synchronous := flag.String("synchronous", "normal", "SQLite synchronous pragma: normal or full")
	flag.Parse()

	if *synchronous != "normal" && *synchronous != "full" {
		fmt.Fprintln(os.Stderr, "ferretdb: -synchronous must be normal or full")
		os.Exit(2)
	}

	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb: bad -log-level:", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + *dir + "/?_pragma=synchronous(" + *synchronous + ")",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	go func() {
		// The URI is known once the listener is up; print it so callers can wait for it.
		fmt.Println("ready", f.MongoDBURI())
	}()

	if err := f.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}
