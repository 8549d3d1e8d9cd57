import type { Command } from 'commander';
import type { Config } from '../config/load-config.js';
import { type ConfigWarning, checkConfig } from '../setup/config-check.js';
import { type CommonOptions, loadCliConfig, printResult, withCommonOptions } from './cli-context.js';

/** What `baud config check` found in a configuration that loaded and compiled. */
export interface ConfigCheckReport {
  readonly configPath: string;
  readonly warnings: readonly ConfigWarning[];
  /** Whether the check passes: always without `--strict`, only without warnings with it. */
  readonly passed: boolean;
  /** What is printed without `--json`. */
  readonly lines: readonly string[];
}

/**
 * Checks `config` as `baud serve` would before it starts (a `ConfigError`, with the line the
 * server would print, when it would not start) and reports the warnings the server would log.
 */
export function reportConfigCheck(config: Config, options: { readonly strict: boolean }): ConfigCheckReport {
  const warnings = checkConfig(config);
  const { configPath, exists } = config.source;
  const what = exists ? configPath : `${configPath} (absent: every value is a default)`;
  const passed = !options.strict || warnings.length === 0;
  const count = `${warnings.length} warning${warnings.length === 1 ? '' : 's'}`;
  const verdict = warnings.length === 0 ? 'valid' : passed ? `valid, ${count}` : `valid, but ${count} (--strict)`;
  return {
    configPath,
    warnings,
    passed,
    lines: [`${what}: ${verdict}`, ...warnings.map((warning) => `  warning: ${warning.message}`)],
  };
}

/** `baud config check`: validates a configuration without starting the board. */
export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('the board’s configuration file');
  withCommonOptions(
    config
      .command('check')
      .description('validate the configuration as `baud serve` would, without starting; print its warnings')
      .option('--strict', 'exit 1 when there are warnings too'),
  ).action((options: CommonOptions & { strict?: boolean }) => {
    const report = reportConfigCheck(loadCliConfig(options), { strict: options.strict ?? false });
    printResult(
      options,
      { configPath: report.configPath, valid: true, passed: report.passed, warnings: report.warnings },
      report.lines,
    );
    if (!report.passed) process.exitCode = 1;
  });
}
