// Which mode selector the session bar shows.

/**
 * ACP: config options supersede modes. An agent with a config option of category "mode" offers its modes there,
 * so the legacy `modes` selector is hidden (else two "Mode" selectors stand side by side); one whose options are
 * of other categories only (a model, say) keeps it: it is its only way to switch modes.
 */
export function legacyModesSuperseded(configOptions) {
  return Array.isArray(configOptions) && configOptions.some((o) => o && o.category === 'mode');
}
