# Russian texts of commands (Fluent; see src/l10n/mod.rs). One message per key.

## cvo upgrade: the update request (src/cluster/update_request); oc's `info:` and `warning:`
## markers stay, as in the dashboard's catalogue; condition types, precondition names and
## flags stay English.

req-no-update = info: обновление не выполняется
req-cleared = Поле желаемого обновления очищено, кластер остаётся на { $at }
req-cancelled = Запрошенное обновление до { $to } отменено
req-channel-already-clear = info: канал обновлений кластера уже не задан (без изменений)
req-channel-already = info: кластер уже в канале { $current } (без изменений)
req-channel-unknown = Нет каналов, о которых известно, что они совместимы с текущей версией «{ $version }»; проверить «{ $channel }» невозможно. Канал обновлений всё равно устанавливается в «{ $channel }».
req-channel-clear-refused = Вы запрашиваете очистку канала обновлений. Текущий канал «{ $current }» входит в доступные каналы; чтобы продолжить, укажите --allow-explicit-channel
req-channel-current-unlisted = текущий канал «{ $current }» не входит в доступные каналы ({ $list })
req-channel-listed = { $version } входит в { $channel }
req-channel-refused = запрошенный канал «{ $channel }» не входит в доступные каналы ({ $list }); чтобы продолжить, укажите --allow-explicit-channel
req-channel-explicit = Запрошенный канал «{ $channel }» не входит в доступные каналы ({ $list }). Вы указали --allow-explicit-channel, чтобы всё равно продолжить. Канал обновлений устанавливается в «{ $channel }».
req-channel-clearing = Канал «{ $current }» очищается; кластер больше не будет запрашивать рекомендации доступных обновлений.
req-accept-gate-off = FeatureGate «cluster» не включает { $gate } для { $version }: кластер отметил бы spec.desiredUpdate.acceptRisks как Forbidden (acceptRisks must not be specified) и не принял бы больше ни одного запроса; вместо этого запросите условное обновление с --allow-not-recommended
req-accept-shown = info: принятые риски: [{ $list }]
req-accept-unchanged = info: принятые риски не изменились
req-accept-gate-on = { $gate } включён для { $version }
req-force-warning = --force отключает проверку указанного образа релиза кластером и снимает любые невыполненные предусловия обновления. Используйте его, только если вы тестируете неподписанные образы релиза или обходите известную ошибку оператора версии кластера и сами проверили подлинность образа.
req-already-at-version = info: кластер уже на версии { $v }
req-already-at = info: кластер уже на { $i }
req-recommended = { $version } — рекомендуемое обновление
req-explicit-upgrade-warning = Запрошенный образ обновления не входит в доступные обновления. Вы указали --allow-explicit-upgrade, чтобы обновление всё равно продолжилось
req-not-listed = { $image } не входит в доступные обновления
req-force-waiving = --force снимает: { $message }
req-done-image = Запрошено обновление до образа релиза { $image }
req-done-version = Запрошено обновление до { $version }
req-multi-already = info: обновление до мультиархитектурного кластера уже запрошено
req-multi-no-version = в status.desired ClusterVersion нет версии, которую можно запросить как мультиархитектурную
req-multi-passed = { $version } запрашивается как мультиархитектурный релиз
req-multi-done = Запрошено обновление до мультиархитектурного кластера
req-by-tag-warning = Ссылки на образ по тегу опасны; вместе с --force они пока допускаются ради обратной совместимости, но гораздо безопаснее передать ссылку по дайджесту
req-not-registry = --to-image должен быть ссылкой на образ в реестре, а не { $what }: { $image }
req-invalid-pullspec = --to-image должен быть правильной ссылкой на образ: { $e }
req-by-digest-needed = --to-image должен быть ссылкой на образ по дайджесту, если не указан --force: кластер не может проверить образ релиза, полученный не по дайджесту. Даже с --force теги использовать не рекомендуется, хотя ради обратной совместимости это пока допускается
req-by-digest = { $image } — ссылка на образ по дайджесту
req-by-tag = { $image } — ссылка на образ по тегу
req-local-path = локальный путь
req-scheme-location = адрес { $what }://
req-listed-refused = служба обновлений указывает для { $version } образ релиза «{ $image }», который { $why }; он отклонён
req-listed-not-registry = — { $what }, а не ссылка на образ в реестре
req-listed-invalid = не является правильной ссылкой на образ ({ $e })
req-listed-by-tag = служба обновлений указывает для { $version } образ релиза { $image }, который не является ссылкой по дайджесту; он принимается только с --force, потому что кластер не может проверить образ релиза, полученный не по дайджесту
req-not-recommended =
    обновление { $version } не входит в рекомендуемые, но доступно как условное обновление. Чтобы принять риск Recommended={ $status } и продолжить обновление, укажите --allow-not-recommended.
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    {""}
req-bypass-start = с --allow-not-recommended вы приняли риски обновления до{" "}
req-bypass-rest = { $version } и обошли Recommended={ $status } { $reason }: { $message }
req-next-an = { $option }, чтобы продолжить обновление
req-next-the = { $option }, чтобы продолжить это обновление
req-cannot-refresh =
    не удаётся обновить список доступных обновлений:
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    {""}
    укажите { $next }.
req-no-updates-at-all = нет ни рекомендуемых, ни условных обновлений; укажите { $next } или дождитесь новых обновлений.
req-already-latest = info: кластер уже на последней доступной версии { $version }
req-no-recommended = нет рекомендуемых обновлений; укажите { $next } или дождитесь новых обновлений.
req-not-a-target = обновление не входит в возможные цели: { $versions }. Укажите { $next }.
req-invalid =
    объект ClusterVersion недействителен; сначала исправьте его состояние:
    {""}
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
req-valid = ClusterVersion действителен
req-desired-empty = в status.desired ClusterVersion нет ни версии, ни образа; сообщите об ошибке
req-failing =
    в кластере ошибка при синхронизации «{ $target }»:
    {""}
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
req-not-failing = кластер без ошибок (Failing не True)
req-upgrading =
    кластер уже обновляется:
    {""}
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
req-not-upgrading = обновление не выполняется
req-bypassing = --allow-upgrade-with-warnings обходит: { $list }
req-target-unknown = целевая версия неизвестна, пока кластер не загрузит образ релиза; тогда кластер и проверит
req-non-blocking = { $reason } не блокирует; кластер записывает это в принятые риски обновления
req-upgradeable-ok = Upgradeable не False
req-upgradeable-same-minor = Upgradeable=False не блокирует переход с { $c } на { $t } (та же минорная версия или ниже)
req-rollback-previous = { $t } — предыдущая версия кластера в той же минорной версии
req-rollback-ok = { $t } не ниже { $c }
req-giant-hop-major = переход с { $c } на { $t } — единственное допустимое обновление мажорной версии (4.y на 5.0)
req-giant-hop-ok = переход с { $c } на { $t } — в пределах одной минорной версии
req-refused-guards =
    { $list }
    {""}
    Чтобы всё равно обновиться, укажите --allow-upgrade-with-warnings.
req-refused-force =
    { $message }
    {""}
    Чтобы всё равно обновиться, укажите --force (он также отключает проверку образа релиза кластером).

## cvo upgrade --read-only: the dry run (src/cli/upgrade/dry_run.rs)

dry-passed = пройдено
dry-waived = снято
dry-waived-by = {" "}(флагом { $flag })
dry-blocking = блокирует
dry-would-waive = {" "}({ $flag } снял бы его)
dry-no-waiver = {" "}(ни один флаг его не снимает)
dry-warning = замечание
dry-unchecked = не проверено
dry-cluster-checks = {" "}(проверяет кластер)
dry-preconditions = Предусловия (--read-only: проверены, ничего не записано):
dry-none-apply = {"  "}(к этому запросу ни одно не относится)
dry-would-patch = Был бы отправлен патч clusterversion/{ $name } (JSON merge patch):
dry-then = Затем: { $done }

## cvo upgrade: the status view, flags and channel (src/cli/upgrade/mod.rs)

upgrade-no-cluster-version = Сведений о версии кластера нет: чтобы получить текущую версию, нужно подключиться к серверу OpenShift версии 4
upgrade-from-read-only = --from только для чтения: для --to, --to-image, --to-latest, --to-multi-arch и --clear нужен кластер (kubeconfig)
upgrade-clear-alone = --clear нельзя указывать вместе с другими флагами
upgrade-multi-alone = --to-multi-arch нельзя указывать вместе с --to, --to-image или --to-latest
upgrade-to-or-image = можно указать только один из --to и --to-image
upgrade-latest-alone = --to-latest нельзя указывать вместе с --to или --to-image
upgrade-to-semver = --to должен быть семантической версией (например, 4.0.1 или 4.1.0-nightly-20181104): { $e }
upgrade-tag-resolved = info: { $image } указывает на { $by_digest }; запрашивается дайджест
upgrade-tag-resolve-failed = --to-image { $image }: не удалось получить дайджест по тегу: { $e }
upgrade-no-cv-in = нет ClusterVersion в { $source }: добавьте файл с clusterversion/version
upgrade-reading-cv = { $cluster }: чтение clusterversion/version
upgrade-accepting-risk = warning: принимается риск { $name }: { $message }{ $url }
upgrade-empty-channel = пустой канал: чтобы очистить канал обновлений, укажите --clear
upgrade-channel-from-read-only = --from только для чтения: чтобы задать или очистить канал обновлений, нужен кластер (kubeconfig)
upgrade-failing =
    Failing={ $status }:
    {""}
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    {""}
    {""}
upgrade-no-failing-info = warning: сведений о Failing сейчас нет; подробнее см. `oc describe clusterversion`.
upgrade-no-progressing-info = warning: сведений о Progressing сейчас нет; подробнее см. `oc describe clusterversion`.
upgrade-not-upgradeable =
    Upgradeable=False
    {""}
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    {""}
    {""}
upgrade-release-accepted =
    ReleaseAccepted={ $status }
    {""}
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    {""}
    {""}
upgrade-col-version = ВЕРСИЯ
upgrade-col-image = ОБРАЗ
upgrade-cannot-refresh =
    warning: не удаётся обновить список доступных обновлений:
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    { $age }
    {""}
upgrade-cannot-display =
    warning: не удаётся показать доступные обновления:
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    {""}
    {""}
upgrade-known-issue =
    {""}
    {"  "}Версия: { $version }
    {"  "}Образ: { $image }
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    {""}
upgrade-qualifier-status = , или с состоянием рекомендации «{ $status }»,

## cvo upgrade recommend (src/cli/upgrade/recommend.rs); the checks' types, reasons and alert
## texts stay as oc prints them.

recommend-quiet-needs-version = --quiet можно указать только вместе с --version
recommend-outdated-with-version = с --version флаг --show-outdated-releases не нужен
recommend-bad-semver = не удаётся разобрать целевую версию SemVer «{ $v }»: { $e }
recommend-in-channel-not-offered = { $v } есть в канале { $channel }, но не предлагается: { $why }.
recommend-no-alert-data = У этого запуска с --from нет данных об оповещениях (файл --alerts FILE не указан)
recommend-no-alert-data-at = У этого запуска с --from нет данных об оповещениях в { $path }
recommend-accepted-prefix = принято{" "}
recommend-in-progress =
    info: выполняется обновление. Возможно, стоит дождаться его завершения, прежде чем запрашивать новое.
    {"  "}{ $message }
    {""}
    {""}
recommend-precheck-failed = Не удалось проверить по крайней мере часть предусловий: { $e }
recommend-happy =
    Следующие условия не нашли препятствий для обновления этого кластера до более новых релизов: { $list }
    {""}
    {""}
recommend-accepted =
    Следующие условия нашли поводы для беспокойства при обновлении этого кластера до более новых релизов, но они явно приняты через --accept: { $list }
    {""}
    {""}
recommend-unhappy =
    Следующие условия нашли поводы для беспокойства при обновлении этого кластера до более новых релизов: { $list }
    {""}
    {""}
recommend-check =
    { $type_ }={ $status }:
    {""}
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    {""}
    {""}
recommend-cannot-refresh =
    warning: не удаётся обновить список доступных обновлений:
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    {""}
    {""}
recommend-upstream-unset = Служба обновлений (upstream) не задана, поэтому кластер использует подходящую по умолчанию.
recommend-upstream = Служба обновлений (upstream): { $url }
recommend-bad-available = warning: не удаётся разобрать версию SemVer доступного обновления «{ $version }»: { $e }
recommend-cannot-inject = warning: не удаётся добавить Upgradeable=False как риск условного обновления: { $e }
recommend-col-issues = ПРОБЛЕМЫ
recommend-updates-to = Обновления до { $major }.{ $minor }:
recommend-older = И ещё { $count } { $count ->
        [one] более старое обновление
        [few] более старых обновления
       *[many] более старых обновлений
    } { $major }.{ $minor }: их покажут '--show-outdated-releases' или '--version VERSION'.
recommend-no-issues = известных проблем, касающихся этого кластера, нет
recommend-long-entry =
    {"  "}Версия: { $version }
    {"  "}Образ: { $image }
    {"  "}Причина: { $reason }
    {"  "}Сообщение: { $message }
    {""}
recommend-no-context = поэтому показать контекст для запрошенного релиза { $v } невозможно
recommend-none-available = доступных обновлений нет, { $tail }
recommend-none-to-major = обновлений до { $major } нет, { $tail }
recommend-none-to-minor = обновлений до { $major }.{ $minor } нет, { $tail }
recommend-none-to-version = обновления до { $v } нет, поэтому показать контекст для запрошенного релиза невозможно
recommend-version-clean =
    У обновления до { $version } нет известных проблем, касающихся этого кластера.
    Образ: { $image }
    URL релиза: { $url }
    {""}
recommend-accepted-via = { $reason } принято через ConditionalUpdateRisk
recommend-version-risk =
    Обновление до { $version } { $type_ }={ $status }:
    Образ: { $image }
    URL релиза: { $url }
    Причина: { $reason }
    Сообщение: { $message }
    {""}
recommend-not-accepted = проблемы, которые касаются этого кластера, но не перечислены в --accept: { $list }
recommend-clean-but-accepted = У обновления до { $version } нет известных проблем, касающихся этого кластера, кроме принятых { $list }.

## cvo status --lang ru (src/cli/status.rs): the column names (the dashboard's col-* texts),
## the pool and node counts and the labels of --details=health; assessments, phases, levels
## and impacts stay as oc prints them (the values scripts and the `/` filter match).

status-col-worker-pool = ПУЛ РАБОЧИХ УЗЛОВ
status-pool-total = всего: { $n }
status-pool-counts = доступны: { $available }, обновляются: { $progressing }, освобождаются: { $draining }
status-pool-excluded = , исключены: { $n }
status-pool-degraded = , деградированы: { $n }
status-omitted-nodes = Не показаны ещё узлы: всего { $total }, завершено { $completed }, доступны { $available }, обновляются { $progressing }, устарели { $outdated }, освобождаются { $draining }, исключены { $excluded }, деградированы 0.
status-omitted-hint = Укажите --details=nodes, чтобы увидеть все сведения.
status-label-message = Сообщение:{" "}
status-label-since = С момента:
status-label-level = Уровень:
status-label-impact = Влияние:
status-label-reference = Ссылка:
status-label-resources = Ресурсы:
status-label-description = Описание:

## cvo upgrade: cvo's own lines where oc's text does not cover the situation
## (src/cli/upgrade/explain.rs) and accept's usage errors (src/cli/upgrade/accept.rs)

accept-illegal-risk = недопустимый риск «{ $name }»
accept-both = риски указаны и как Risk, и как Risk-: { $list }
accept-replace-suffix = Суффикс '-' у рисков недопустим вместе с --replace
explain-not-picked-up = info: обновление до { $target }, запрошенное в spec.desiredUpdate, ещё не подхвачено ни одним оператором версии кластера (ClusterVersion на поколении { $generation }, его статус — на { $observed }).
explain-set-upstream = Чтобы получать их, задайте в spec.upstream URL службы обновлений.
explain-not-fetched = info: доступные обновления не получаются (RetrievedUpdates=False, NoUpstream): { $how }
explain-last-good = {"  "}Последний удачный ответ: { $age } назад, в { $at }, от { $upstream }
explain-last-good-before = {"  "}Последний удачный ответ: более { $age } назад (до того, как RetrievedUpdates стал False в { $at })
explain-last-good-unknown = {"  "}Последний удачный ответ: до того, как RetrievedUpdates стал False (время неизвестно)
explain-why-via = обновления с { $from } пока нет; достижим через обновление сначала до { $v }
explain-why-no-path = в этом канале нет пути обновления с { $from }
explain-why-unusable = его условное обновление с { $from } отброшено: у риска нет распознанного правила сопоставления, или обновление объявлено дважды
explain-why-not-recommended = не рекомендуется: риск { $names } относится к этому кластеру
explain-why-unevaluated = состояние рекомендации { $status }{ $reason }: риск { $names } не удалось оценить
explain-why-pending = условное обновление с риском { $names }, кластер его ещё не оценил
explain-not-in-graph = Служба обновлений { $upstream } не знает { $from } в канале { $channel }, поэтому обновлений с него не предлагает.
explain-nothing-newer = Служба обновлений { $upstream } не знает релизов новее { $from } в канале { $channel }.
explain-all-offered = Служба обновлений { $upstream } предлагает все релизы новее { $from } в канале { $channel }.
explain-not-offered = Релизы в канале { $channel } новее { $from }, которые не предлагаются (служба обновлений { $upstream }):
explain-col-why = ПОЧЕМУ
explain-older-not-offered = {"  "}И ещё { $count } { $count ->
        [one] более старый релиз не предлагается
        [few] более старых релиза не предлагаются
       *[many] более старых релизов не предлагаются
    }.
explain-risks-in-full = Риски нерекомендуемого обновления полностью показываются { $details }.
explain-with-version = с --version VERSION
explain-with-include = с --include-not-recommended

## The commands' last line on an error (cli::error_line): what kind of failure, then the
## error's own text (kube's and the system's words, API verbs and resource names as they are).

error-read-only = отказ в записи: режим только для чтения (--read-only) запрещает любую запись, в том числе запросы обновления
error-unreachable = кластер недоступен
error-unauthorized = кластер не принял учётные данные (401)
error-forbidden = кластер запрещает это (403)
error-not-found = не найдено в кластере (404)
error-server = ошибка сервера API
error-refused = сервер API отклонил запрос
error-kubeconfig = ошибка файла
error-no-cluster = не к чему подключиться: { $detail }
error-prefix = ошибка:{" "}

## cvo payload inspect (src/cli/payload.rs): the labels and counts; manifest kinds and names,
## exclusion categories and reasons, the profile, feature set and capabilities as they are.

inspect-release = Релиз:
inspect-architecture = Архитектура:
inspect-channels = Каналы:
inspect-url = URL:
inspect-hash = Хэш:
inspect-directory = Каталог:
inspect-cluster = Кластер:
inspect-warning = Предупреждение:
inspect-none = <нет>
inspect-release-unknown = неизвестен (нет release-metadata)
inspect-hash-of = { $hash } (по { $included } { $included ->
        [one] включённому манифесту
       *[other] включённым манифестам
    })
inspect-manifests = Манифесты: загружено { $loaded }, включено { $included }, исключено { $excluded }
inspect-excluded-by = {"  "}исключено по { $c }: { $n }
inspect-task-graph = Граф задач ({ $mode }, обработчиков: { $workers }): узлов { $nodes } (с задачами { $with_tasks }), шагов { $steps }
inspect-step = {"  "}шаг { $k }: { $parts }
inspect-excluded-manifests = Исключённые манифесты:

## cvo reconcile (src/cli/reconcile.rs): the text summary's labels and sentences and the
## progress lines; the values (outcome, verbs, reasons, versions) as `-o json` gives them.

reconcile-wait-cv = ClusterVersion ({ $error })
reconcile-wait-pull = образ релиза { $image } (загрузка: { $progress })
reconcile-wait-lease-held = Lease { $lease }, которым владеет { $holder }
reconcile-wait-lease = Lease { $lease }
reconcile-wait-start = ClusterVersion и полезную нагрузку релиза
reconcile-wait-pass = завершения прохода { $pass }: выполнено задач { $done } из { $total }
reconcile-wait-complete-why = завершения релиза ({ $why })
reconcile-wait-complete = завершения релиза
reconcile-wait-first-pass = начала первого прохода
reconcile-waiting = cvo: ожидание: { $what } ({ $elapsed } из { $timeout })
reconcile-abort = cvo: движок не остановился за 10s; он прерван
reconcile-one-would-change = Изменился бы 1 объект (watch-only: ничего не записано)
reconcile-would-change = { $n ->
        [one] Изменился бы { $n } объект
        [few] Изменились бы { $n } объекта
       *[many] Изменились бы { $n } объектов
    } (watch-only: ничего не записано)
reconcile-drift-unknown = дрейф неизвестен: ни один проход не завершился целиком ({ $outcome }; watch-only: ничего не записано)
reconcile-release = релиз:{" "}
reconcile-outcome = итог:{" "}
reconcile-tasks = задачи: выполнено { $done } из { $total }, проходов: { $passes }
reconcile-requests = запросы к API:{" "}
reconcile-writes = записи: { $writes } (объекты полезной нагрузки: { $objects }, статус ClusterVersion: { $status }, Lease: { $lease }, прочее: { $other })
reconcile-progressing = ход:{" "}
reconcile-failure = сбой:{" "}
reconcile-reason = причина:{" "}
reconcile-time = время:{" "}

## cvo rehearse's report (src/cli/rehearse/report.rs); the preconditions' states, the estimate's
## method and the operators', pools' and risks' names and values as `-o json` gives them.

rehearse-title = Репетиция обновления { $from } -> { $to } на смоделированной копии кластера: в ваш кластер ничего не записано.
rehearse-target = Целевой релиз: { $image }
rehearse-preconditions = Предусловия (как их решает `cvo upgrade --to-image --read-only`):
rehearse-refused = {"  "}=> запрос был бы отклонён: { $refusal }
rehearse-as-if-forced = {"     "}(репетиция продолжилась так, будто указан --force)
rehearse-assume-recovery = считаются восстановившимися, когда запустят { $version } (--assume-recovery)
rehearse-kept-degraded = остаются Degraded в репетиции (--assume-recovery репетирует их восстановление)
rehearse-degraded = Degraded в снимке: кластерных операторов { $n }, { $how }:
rehearse-no-reason = причина не указана
rehearse-clipped = ... (полностью — в -o json)
rehearse-manifests = Манифесты: создано { $c }, изменено { $u }, удалено { $d } из { $total } в полезной нагрузке релиза
rehearse-created-note = {"  "}(объект, которого нет в снимке, считается созданным: must-gather не содержит рабочих нагрузок)
rehearse-col-run-level = УРОВЕНЬ ЗАПУСКА
rehearse-col-component = КОМПОНЕНТ
rehearse-col-created = СОЗДАНО
rehearse-col-changed = ИЗМЕНЕНО
rehearse-col-deleted = УДАЛЕНО
rehearse-operators = Кластерные операторы, которые обновятся: { $n }
rehearse-new = (новый)
rehearse-not-reached = (не достигнута)
rehearse-pools = Пулы машин, которые обновятся: { $n } (перезагрузок узлов: { $nodes })
rehearse-pool-updated = перезагружено узлов { $rebooted } из { $nodes }, Updated
rehearse-pool-updating = перезагружено узлов { $rebooted } из { $nodes }, ещё обновляется
rehearse-risks = Риски, относящиеся к { $version } (из conditionalUpdates кластера):
rehearse-no-risks = {"  "}неизвестны
rehearse-not-evaluated = не оценён
rehearse-risk = {"  "}{ $name } (относится: { $applies }): { $message } { $url }
rehearse-estimate = Оценка длительности:
rehearse-about = {"  "}около { $m } мин: { $method }
rehearse-rehearsal = Репетиция:
rehearse-completed = {"  "}Завершена: выполнено задач { $done } из { $total } за { $secs } с смоделированного времени
rehearse-stalled = {"  "}Застряла: выполнено задач { $done } из { $total } за { $secs } с смоделированного времени; { $min } мин ничего не менялось, поэтому репетиция остановлена
rehearse-not-completed = {"  "}НЕ завершена за { $secs } с смоделированного времени: выполнено задач { $done } из { $total }
rehearse-stuck = {"  "}застряло: { $s }
rehearse-check-passed = с { $current } на { $version }: пройдено
rehearse-payload-dir = { $image } — каталог полезной нагрузки, считается образом релиза по дайджесту

## cvo get (src/cli/get.rs): its own messages; the tables are oc's printer columns and
## values, as `oc get` prints them (scripts read them).

get-no-resources = Ресурсы не найдены
get-unknown-kind = неизвестный вид ресурса «{ $kind }»; известные: { $known }

## cvo payload verify (src/cli/payload_verify.rs)

verify-verified = подпись проверена: { $digest }
verify-signed-by = {"  "}{ $keyring }: ключ { $key } подписал { $identity } ({ $source })
verify-not-verified = подпись не проверена: { $e }

## cvo payload pull's progress on stderr (src/cli/payload.rs); the digest on stdout is data.

pull-progress = cvo: загрузка { $image }: слоёв { $done } из { $total }, { $mb_done } из { $mb_total } МБ
pull-resolved = cvo: { $pullspec } — это { $digest } (релиз { $version })
pull-resolved-cached = cvo: { $pullspec } — это { $digest } (релиз { $version }), из кэша

## cvo sim serve's stderr lines (src/sim/serve.rs); the stdout line scripts parse stays English.
sim-change = cvo sim: +{ $at } с, изменение { $i }: { $what }
sim-change-failed = cvo sim: +{ $at } с, изменение { $i } не удалось: { $e }
sim-stopped = cvo sim: остановлен
