#!/usr/bin/env node
// The `convotrack-collector` command. A committed launcher rather than dist/cli.js itself, so
// that a workspace installed before its first build links the bin without "Failed to create bin".
import '../dist/cli.js'
