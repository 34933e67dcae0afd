// Every file of web/, embedded as text so `bun build --compile` carries the dashboard inside
// the executable. One import and one ASSETS line a file; served at /dashboard/<path>.
import appCss from "../../../web/app.css" with { type: "text" };
import controlsCss from "../../../web/controls.css" with { type: "text" };
import favicon from "../../../web/favicon.svg" with { type: "text" };
import appJs from "../../../web/app.js" with { type: "text" };
import apiJs from "../../../web/api.js" with { type: "text" };
import indexHtml from "../../../web/index.html" with { type: "text" };
import sessionJs from "../../../web/session.js" with { type: "text" };
import ssoJs from "../../../web/sso.js" with { type: "text" };
import uiJs from "../../../web/ui.js" with { type: "text" };
import keysPage from "../../../web/pages/keys.js" with { type: "text" };
import accountPage from "../../../web/pages/account.js" with { type: "text" };
import secondFactorComponent from "../../../web/components/second-factor.js" with { type: "text" };
import systemPage from "../../../web/pages/system.js" with { type: "text" };
import actorComponent from "../../../web/components/actor.js" with { type: "text" };
import endUserSelectComponent from "../../../web/components/end-user-select.js" with { type: "text" };
import factsComponent from "../../../web/components/facts.js" with { type: "text" };
import modelsAdviceComponent from "../../../web/components/models-advice.js" with { type: "text" };
import fieldsComponent from "../../../web/components/fields.js" with { type: "text" };
import formatComponent from "../../../web/components/format.js" with { type: "text" };
import markdownComponent from "../../../web/components/markdown.js" with { type: "text" };
import namesComponent from "../../../web/components/names.js" with { type: "text" };
import searchBoxComponent from "../../../web/components/search-box.js" with { type: "text" };
import statusBadgeComponent from "../../../web/components/status-badge.js" with { type: "text" };
import summaryViewComponent from "../../../web/components/summary-view.js" with { type: "text" };
import stylesheetComponent from "../../../web/components/stylesheet.js" with { type: "text" };
import tableComponent from "../../../web/components/table.js" with { type: "text" };
import transcriptPlayerComponent from "../../../web/components/transcript-player.js" with { type: "text" };
import vocabularyFormComponent from "../../../web/components/vocabulary-form.js" with { type: "text" };
import liveTranscriptComponent from "../../../web/components/live-transcript.js" with { type: "text" };
import askPage from "../../../web/pages/ask.js" with { type: "text" };
import devicePage from "../../../web/pages/device.js" with { type: "text" };
import devicesPage from "../../../web/pages/devices.js" with { type: "text" };
import endUserPage from "../../../web/pages/end-user.js" with { type: "text" };
import endUsersPage from "../../../web/pages/end-users.js" with { type: "text" };
import recordingPage from "../../../web/pages/recording.js" with { type: "text" };
import recordingsPage from "../../../web/pages/recordings.js" with { type: "text" };
import searchPage from "../../../web/pages/search.js" with { type: "text" };
import webhooksPage from "../../../web/pages/webhooks.js" with { type: "text" };
import compliancePage from "../../../web/pages/compliance.js" with { type: "text" };
import disclosuresPage from "../../../web/pages/disclosures.js" with { type: "text" };
import complianceBreakGlassPage from "../../../web/pages/compliance/break-glass.js" with { type: "text" };
import administratorsPage from "../../../web/pages/administrators.js" with { type: "text" };
import askMessagePage from "../../../web/pages/ask/message.js" with { type: "text" };
import askRecordingPickerPage from "../../../web/pages/ask/recording-picker.js" with { type: "text" };
import deviceBindingPage from "../../../web/pages/device/binding.js" with { type: "text" };
import deviceCommandsPage from "../../../web/pages/device/commands.js" with { type: "text" };
import deviceOtaPage from "../../../web/pages/device/ota.js" with { type: "text" };
import deviceSettingsPage from "../../../web/pages/device/settings.js" with { type: "text" };
import deviceWifiGrantPage from "../../../web/pages/device/wifi-grant.js" with { type: "text" };
import recordingCorrectionsPage from "../../../web/pages/recording/corrections.js" with { type: "text" };
import recordingSummariesPage from "../../../web/pages/recording/summaries.js" with { type: "text" };
import recordingUploadPage from "../../../web/pages/recording/upload.js" with { type: "text" };
import systemModelsPage from "../../../web/pages/system/models.js" with { type: "text" };
import systemTablePage from "../../../web/pages/system/table.js" with { type: "text" };
import systemVerdictsPage from "../../../web/pages/system/verdicts.js" with { type: "text" };
import systemWirePage from "../../../web/pages/system/wire.js" with { type: "text" };
import webhooksEndpointPage from "../../../web/pages/webhooks/endpoint.js" with { type: "text" };
import webhooksEventsPage from "../../../web/pages/webhooks/events.js" with { type: "text" };
import pagesCss from "../../../web/pages.css" with { type: "text" };
import recordingCss from "../../../web/recording.css" with { type: "text" };
import searchCss from "../../../web/search.css" with { type: "text" };

/**
 * Path under /dashboard/ -> file text. bun-types describe HTML imports as bundles; with type "text" it is the file's text.
 * No prototype: a lookup by a requested path finds own files only, never `constructor`, `__proto__` or `toString`.
 */
export const ASSETS: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  "index.html": indexHtml as unknown as string,
  "app.css": appCss,
  "controls.css": controlsCss,
  "app.js": appJs,
  "favicon.svg": favicon,
  "api.js": apiJs,
  "session.js": sessionJs,
  "sso.js": ssoJs,
  "ui.js": uiJs,
  "pages/keys.js": keysPage,
  "pages/account.js": accountPage,
  "components/second-factor.js": secondFactorComponent,
  "pages/system.js": systemPage,
  "components/actor.js": actorComponent,
  "components/end-user-select.js": endUserSelectComponent,
  "components/facts.js": factsComponent,
  "components/fields.js": fieldsComponent,
  "components/models-advice.js": modelsAdviceComponent,
  "components/format.js": formatComponent,
  "components/markdown.js": markdownComponent,
  "components/names.js": namesComponent,
  "components/search-box.js": searchBoxComponent,
  "components/summary-view.js": summaryViewComponent,
  "components/status-badge.js": statusBadgeComponent,
  "components/stylesheet.js": stylesheetComponent,
  "components/table.js": tableComponent,
  "components/transcript-player.js": transcriptPlayerComponent,
  "components/vocabulary-form.js": vocabularyFormComponent,
  "components/live-transcript.js": liveTranscriptComponent,
  "pages/ask.js": askPage,
  "pages/device.js": devicePage,
  "pages/devices.js": devicesPage,
  "pages/end-user.js": endUserPage,
  "pages/end-users.js": endUsersPage,
  "pages/recording.js": recordingPage,
  "pages/recordings.js": recordingsPage,
  "pages/search.js": searchPage,
  "pages/webhooks.js": webhooksPage,
  "pages/compliance.js": compliancePage,
  "pages/disclosures.js": disclosuresPage,
  "pages/compliance/break-glass.js": complianceBreakGlassPage,
  "pages/administrators.js": administratorsPage,
  "pages/ask/message.js": askMessagePage,
  "pages/ask/recording-picker.js": askRecordingPickerPage,
  "pages/device/binding.js": deviceBindingPage,
  "pages/device/commands.js": deviceCommandsPage,
  "pages/device/ota.js": deviceOtaPage,
  "pages/device/settings.js": deviceSettingsPage,
  "pages/device/wifi-grant.js": deviceWifiGrantPage,
  "pages/recording/corrections.js": recordingCorrectionsPage,
  "pages/recording/summaries.js": recordingSummariesPage,
  "pages/recording/upload.js": recordingUploadPage,
  "pages/system/models.js": systemModelsPage,
  "pages/system/table.js": systemTablePage,
  "pages/system/verdicts.js": systemVerdictsPage,
  "pages/system/wire.js": systemWirePage,
  "pages/webhooks/endpoint.js": webhooksEndpointPage,
  "pages/webhooks/events.js": webhooksEventsPage,
  "pages.css": pagesCss,
  "recording.css": recordingCss,
  "search.css": searchCss,
});
