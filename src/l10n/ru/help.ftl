# Russian texts of help (Fluent; see src/l10n/mod.rs). One message per key.
## clap's own words in `cvo --help` (src/cli/help_l10n.rs). "Вызов:" is as wide as "Usage:",
## so clap's second usage line stays aligned under the first.
help-clap-usage = Вызов:
help-clap-commands = Команды
help-clap-options = Параметры
help-clap-arguments = Аргументы
help-clap-print-help = Показать справку
help-clap-print-help-more = Показать справку (подробнее: '--help')
help-clap-print-help-summary = Показать справку (кратко: '-h')
help-clap-print-version = Показать версию
help-clap-help-command = Показать эту справку или справку указанных подкоманд
## The command tree's texts (keys made by src/cli/help_l10n.rs from main.rs's and
## cli::args's doc comments: clap-about-PATH, clap-arg-ID, clap-arg-PATH--ID, clap-heading-SLUG).
clap-heading-logging-global = Журнал (глобальные)
clap-heading-language-global = Язык (глобальные)
clap-heading-cluster-connection-global-before-or-after-the-command = Подключение к кластеру (глобальные: до или после команды)
clap-about-cvo = Оператор версии кластера для кластеров, совместимых с OpenShift: панель, оператор и CLI
clap-arg-verbosity = Подробность журнала, как у kubectl: 0 предупреждения (по умолчанию), 1-2 ход работы, 3-5 отладка, 6-7 каждый запрос к API, 8+ всё (заменяет RUST_LOG; не файл журнала панели)
clap-arg-lang = Язык собственных сообщений cvo: en или ru (по умолчанию: из LC_ALL, LC_MESSAGES, LANG; `cvo status` и `cvo upgrade` остаются на английском, если язык не задан этим флагом)
clap-arg-from = Читать офлайн-снимок (файл или каталог, можно несколько раз) вместо кластера
clap-arg-kubeconfig = Путь к файлу kubeconfig (по умолчанию: $KUBECONFIG, ~/.kube/config, конфигурация внутри кластера)
clap-arg-context = Используемый контекст kubeconfig
clap-arg-server = URL API-сервера вместо указанного в кластере kubeconfig
clap-arg-token = Bearer-токен для API-сервера вместо всех учётных данных пользователя kubeconfig
clap-arg-impersonate = Имя пользователя, от имени которого выполняется операция (пользователь или сервисная учётная запись system:serviceaccount:NAMESPACE:NAME)
clap-arg-impersonate-groups = Группа, от имени которой выполняется операция (можно несколько раз; нужен --as)
clap-arg-namespace = Пространство имён для этой команды: по умолчанию клиента; для `cvo operator start` — пространство имён Lease и событий оператора версии кластера (по умолчанию: $CVO_NAMESPACE, иначе openshift-cluster-version)
clap-arg-certificate-authority = PEM-набор центров сертификации, которым доверяется API-сервер, вместо указанных в kubeconfig
clap-arg-insecure-skip-tls-verify = Не проверять сертификат API-сервера (небезопасно)
clap-arg-request-timeout = Сколько один запрос может ждать ответа: длительность (`30s`, `1m`, `500ms`) или секунды; 0 — без ограничения. Наблюдения (watch) не ограничиваются (`cvo get -w` завершается по нему)
clap-arg-alerts = Сработавшие оповещения: JSON-ответ Prometheus `/api/v1/alerts`
clap-arg-now = Считать длительности на этот момент (RFC 3339). По умолчанию: текущее время для живого кластера, собственное время снимка для `--from`
clap-arg-read-only = Отказываться от любой записи (запросы обновления, смена канала, переключение в active-apply), с причиной на экране
clap-arg-payload = Полезная нагрузка релиза кластера для встроенного движка (каталог с `manifests/` + `release-manifests/`); по умолчанию: загрузить из реестра образ релиза, указанный в ClusterVersion
clap-arg-no-engine = Без встроенного движка на живом кластере: только состояние кластера (без графа задач, дрейфа и active-apply)
clap-arg-registry-auth = Учётные данные реестра в формате конфигурации docker (по умолчанию: `REGISTRY_AUTH_FILE`, иначе `openshift-config/pull-secret` кластера, если используется кластер)
clap-arg-insecure-registry = Обращаться к этому реестру (`host` или `host:port`) по простому HTTP (можно несколько раз; к реестрам на loopback — всегда)
clap-arg-cache-dir = Кэш извлечённых релизов (по умолчанию `$XDG_CACHE_HOME/cvo/releases`)
clap-about-status = Показать, на каком этапе обновление кластера (как `oc adm upgrade status`)
clap-arg-details = Показать подробности раздела
clap-arg-output = Формат вывода
clap-about-get = Вывести объекты, как это делает `oc get`
clap-arg-kind = Вид объектов: clusterversion (cv), clusteroperators (co), machineconfigpools (mcp) или nodes (no)
clap-arg-name = Только объект с этим именем
clap-arg-get--output = Формат вывода (по умолчанию: таблица, которую печатает `oc get`): wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, custom-columns=HEADER:EXPR[,...], custom-columns-file=FILE
clap-arg-selector = Только объекты, метки которых подходят под этот селектор (`k=v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`, через запятую)
clap-arg-watch = После объектов печатать каждое изменение по мере появления (только живой кластер); завершается по Ctrl-C, при закрытии вывода или по истечении --request-timeout
clap-about-fleet = Все кластеры kubeconfig сразу: версия, канал, ход обновления, сбои, доступные обновления, деградированные операторы, держатель Lease оператора версии кластера (живой вид или -o table|json)
clap-arg-contexts = Только эти контексты, в этом порядке (через запятую; по умолчанию: все контексты kubeconfig)
clap-arg-contexts-regex = Только контексты, имя которых подходит под это регулярное выражение (в любом месте имени)
clap-arg-fleet--output = Печатать таблицу (или её JSON) вместо живого вида
clap-arg-fleet--watch = После первой таблицы печатать её заново при каждом изменении (JSON: один документ на строку); завершается по Ctrl-C или при закрытии вывода
clap-arg-timeout = Сколько таблица ждёт первого ответа каждого кластера, в секундах (по умолчанию 10); кластер, молчащий и после этого, отмечается недоступным
clap-arg-sort = Порядок строк таблицы (с него же начинается вид)
clap-arg-fleet--read-only = Панель, открытая из вида, отказывается от любой записи (как `cvo --read-only`)
clap-about-tui = Открыть панель со встроенным движком в режиме watch-only на живом кластере (`cvo` без команды делает то же для текущего контекста kubeconfig)
clap-about-demo = Живое обновление 4.16.3 → 4.16.4 на модельном кластере, в панели (или без неё); `--snapshot` показывает вместо этого статическое демо застрявшего обновления
clap-arg-headless = Без панели: печатать по строке на каждое событие движка и ход синхронизации (с --snapshot: напечатать статус статического кластера и выйти)
clap-arg-snapshot = Статическое демо: снимок кластера, застрявшего посреди обновления (assets/demo)
clap-arg-scenario = Файл сценария для модельных операторов (деградация, остановка, crash-loop, скорость, seed)
clap-arg-speed = Скорость времени: каждая задержка делится на неё (по умолчанию: из сценария, иначе 10)
clap-arg-until-complete = Без панели: выйти с кодом 0, когда обновление Completed (напечатав историю обновлений), 1 — при сбое, 2 — по истечении времени ожидания
clap-arg-demo--timeout = Остановиться через столько секунд (по умолчанию с --until-complete: 60 + 900/скорость)
clap-arg-auto = Запросить обновление до 4.16.4 самостоятельно вскоре после запуска (как раньше; запускам без панели это нужно, чтобы было обновление для наблюдения). Без этого обновление начинается, когда вы его выберете
clap-arg-demo--read-only = Отказываться от любой записи из панели (запросы обновления, смена канала, переключение в active-apply), с причиной на экране
clap-arg-registry = Локальный реестр для релизов демо: если он отвечает на /v2/ (за 0,5 с), релизы помещаются туда, подписанные ключом демо, и движок загружает и проверяет их; иначе используются встроенные полезные нагрузки. `none`: встроенные, без проверки реестра
clap-about-rehearse = Отрепетировать обновление на модельной копии кластера (из снимка или must-gather) и сообщить, что оно изменит; в кластер ничего не записывается
clap-arg-rehearse--from = Кластер: файлы или каталоги снимка либо must-gather (можно несколько раз), как их читает `cvo status --from`
clap-arg-to-image = Образ релиза цели (сначала загружается в кэш, как `cvo payload pull`)
clap-arg-rehearse--payload = Каталог полезной нагрузки релиза цели (`manifests/` + `release-manifests/`)
clap-arg-rehearse--speed = Скорость времени модельного кластера: каждая задержка делится на неё (по умолчанию 50)
clap-arg-rehearse--output = Формат вывода отчёта
clap-arg-rehearse--details = Перечислить все созданные, изменённые или удалённые манифесты по уровню запуска и компоненту
clap-arg-tui = Показывать панель на модельном кластере во время репетиции; отчёт печатается после выхода из неё
clap-arg-rehearse--timeout = Сдаться через столько секунд настенного времени и сообщить, чего удалось достичь (по умолчанию 60 + 1800/скорость)
clap-arg-assume-recovery = Позволить ClusterOperator, которые в снимке Degraded, восстановиться, когда они запустят целевую версию; по умолчанию они остаются Degraded, и репетиция обновления ждёт их
clap-about-sim = Симулятор Kubernetes API
clap-about-sim-serve = Обслуживать модельный кластер по HTTPS на 127.0.0.1 и записать для него kubeconfig
clap-arg-sim-serve--from = Снимок для обслуживания (файл или каталог, можно несколько раз), как его читает `cvo status --from`
clap-arg-sim-serve--alerts = Отдавать этот ответ Prometheus `/api/v1/alerts` как Thanos querier кластера: отдельный HTTPS-порт за Route openshift-monitoring/thanos-querier, откуда `cvo upgrade recommend` читает оповещения кластера
clap-arg-demo = Обслуживать вместо этого кластер живого демо: 4.16.3 в согласованном состоянии, все объекты assets/demo-cluster/, включая рабочие нагрузки полезной нагрузки релиза (297 объектов с системными пространствами имён). `--from assets/demo-cluster` загружает только то, что читает `cvo status` (56 объектов)
clap-arg-sim-serve--scenario = Файл сценария (YAML): `from:`, `faults:` и временная шкала `changes:` (см. docs/commands.md, `cvo sim serve`)
clap-arg-port = Порт на 127.0.0.1; 0 выбирает свободный
clap-arg-kubeconfig-out = Куда записать kubeconfig для сервера (атомарно, режим 0600)
clap-arg-audit-log = Дописывать по одной строке JSON на запрос: время, метод, путь, глагол, статус, duration_ms, сбой
clap-arg-latency-ms = Задержка, добавляемая к каждому запросу (миллисекунды)
clap-arg-jitter-ms = Дополнительная случайная задержка, равномерно в 0..=MS
clap-arg-errors = Ответы с ошибкой: VERB=CODE:RATE (глагол get|list|watch|create|update|patch|delete|*, код 429|500|503|504, доля 0..1); можно несколько раз, срабатывает первое подходящее правило
clap-arg-timeout-ms = Сколько внедрённый тайм-аут (504) сначала висит (миллисекунды; по умолчанию 3000)
clap-arg-watch-drop-after-events = Закрывать каждое наблюдение (watch) после N событий
clap-arg-watch-drop-after-secs = Закрывать каждое наблюдение (watch) через S секунд
clap-arg-gone-next = Следующие N наблюдений (watch) получают событие ERROR 410 Expired
clap-arg-gone-rate = Затем каждое наблюдение получает его с этой вероятностью (0..1)
clap-arg-conflict-next = Следующие N обновлений/патчей получают 409 Conflict
clap-arg-fault-seed = Seed генератора сбоев (по умолчанию 0)
clap-arg-event-window = Сколько событий наблюдения хранить для возобновления; наблюдение с более старой версии получает 410 Expired и заново запрашивает список (как после уплотнения etcd)
clap-arg-clusters = Обслуживать столько независимых модельных кластеров (1..=1000) одним процессом, у каждого своё хранилище, порт и токен, загруженные из одного источника; в kubeconfig тогда по контексту на кластер, `cvo-sim-0` ... `cvo-sim-<N-1>` (первый — текущий). С `--port P` кластер i слушает P+i. Для `cvo fleet` и его бенчмарка
clap-about-payload = Работа с полезными нагрузками релизов
clap-about-payload-inspect = Показать, что оператор версии кластера применил бы из каталога полезной нагрузки: релиз, включённые и исключённые манифесты с причинами и граф задач
clap-arg-dir = Корень образа релиза (`manifests/` + `release-manifests/`), каталог `release-manifests/`, обычный каталог манифестов или pull spec образа релиза
clap-arg-profile = Профиль кластера
clap-arg-capabilities-baseline = `spec.capabilities.baselineCapabilitySet` (None, v4.11 ... v4.18, vCurrent)
clap-arg-capabilities-additional = `spec.capabilities.additionalEnabledCapabilities`
clap-arg-feature-set = Набор функций кластера (Default, TechPreviewNoUpgrade, DevPreviewNoUpgrade, CustomNoUpgrade, OKD)
clap-arg-feature-gates = Включённые feature gates
clap-arg-exclude = Идентификатор `EXCLUDE_MANIFESTS`
clap-arg-release-image = Pull spec образа релиза, подставляемый в собственные манифесты оператора версии кластера
clap-arg-mode = Какой граф задач показать
clap-about-payload-verify = Проверить, что дайджест релиза подписан каждым настроенным ключом (проверка подписи релиза, как её делает оператор версии кластера перед обновлением)
clap-arg-release = Дайджест релиза (`sha256:<hex>`) или pull spec по дайджесту (`<repo>@sha256:<hex>`)
clap-arg-keys = Файл открытой связки ключей (armored или двоичный); подписать должна каждая связка. Можно несколько раз; с --from-cluster заменяет ключи кластера
clap-arg-stores = Хранилище подписей (`https://`, `http://` или `file://`), читается как `<URL>/sha256=<hex>/signature-<N>`. Можно несколько раз; с --from-cluster заменяет хранилища кластера
clap-arg-from-cluster = Использовать конфигурацию кластера: ConfigMap openshift-config-managed/release-verification, spec.signatureStores в ClusterVersion и ConfigMap подписей
clap-arg-payload-verify--timeout = Сдаться через столько секунд (по умолчанию 120, половина времени получения полезной нагрузки у upstream)
clap-about-payload-pull = Загрузить образ релиза и извлечь его полезную нагрузку в каталог для работы офлайн
clap-arg-pullspec = Pull spec образа релиза (`registry/repo:tag` или `registry/repo@sha256:...`)
clap-arg-payload-pull--dir = Куда поместить `manifests/` и `release-manifests/` (создаётся; если существует, должен быть пуст)
clap-arg-expect-version = Отклонить образ, если версия в его `release-metadata` не эта
clap-arg-arch = Архитектура, которую выбирать из индекса образов (имена Go: amd64, arm64, ppc64le, s390x)
clap-about-reconcile = Применить полезную нагрузку релиза к кластеру (движок синхронизации) или показать её дрейф
clap-arg-reconcile--payload = Каталог полезной нагрузки релиза (`manifests/` + `release-manifests/`) или pull spec образа релиза для загрузки из реестра
clap-arg-reconcile--release-image = Pull spec образа релиза полезной нагрузки (по умолчанию: `file://<canonical DIR>`, псевдо-pull spec, называющий каталог)
clap-arg-dry-run = Watch-only: печатать дрейф, как `kubectl diff`, и ничего не записывать
clap-arg-once = Остановиться ровно после одного полного прохода применения (по умолчанию)
clap-arg-reconcile--until-complete = Работать, пока релиз не станет Completed (код 0); при Failing — код 1
clap-arg-reconcile--timeout = Сдаться через столько секунд (код 3; по умолчанию 120, с --until-complete 7200)
clap-arg-update-service = Запрашивать доступные обновления у этой службы обновлений (заменяет `spec.upstream`, как `--update-service` у upstream)
clap-arg-fetch-updates = Запрашивать доступные обновления у `spec.upstream` (по умолчанию https://api.openshift.com/api/upgrades_info/v1/graph)
clap-arg-prometheus-url = Prometheus-совместимый API запросов для рисков обновления на PromQL (например, маршрут thanos-querier)
clap-arg-prometheus-token-file = Файл с bearer-токеном для --prometheus-url
clap-arg-prometheus-ca-file = PEM-набор ЦС, которым доверяется --prometheus-url (добавляется к системным корневым)
clap-arg-prometheus-service = Подключаться к ClusterIP этого Service (NAMESPACE/NAME, читается перед каждым подключением) вместо разрешения хоста из --prometheus-url, который по-прежнему называет сервер для TLS: под в сети узла не может разрешать имена сервисов кластера (по умолчанию у upstream openshift-monitoring/thanos-querier)
clap-about-upgrade = Запросить обновление или сменить канал, как `oc adm upgrade`; без флагов — статус обновления и рекомендуемые обновления
clap-arg-to = Обновить до этой версии (одной из доступных версий)
clap-arg-upgrade--to-image = Обновить до этого образа релиза (pull spec по дайджесту; тег — только с --force)
clap-arg-to-latest = Обновить до самой высокой доступной версии
clap-arg-to-multi-arch = Обновить текущую версию до её мультиархитектурного релиза
clap-arg-clear = Отменить запрошенное обновление, которое ещё не началось (принятые риски сохраняются)
clap-arg-allow-not-recommended = Разрешить условное обновление, которое не рекомендуется (каждый отклонённый риск печатается)
clap-arg-allow-explicit-upgrade = Разрешить цель --to-image, которой нет среди доступных обновлений
clap-arg-allow-upgrade-with-warnings = Обновлять, даже если в кластере сбой, он некорректен или уже обновляется
clap-arg-force = Пропустить предусловия на стороне кластера (Upgradeable, откат, скачок через минорные версии) и проверку релиза; записывается как desiredUpdate.force
clap-arg-include-not-recommended = Перечислить и условные обновления, которые не рекомендуются
clap-arg-upgrade--read-only = Пробный запуск: напечатать вердикт каждого предусловия и патч, ничего не записывать
clap-about-upgrade-channel = Показать, задать или сбросить канал обновлений
clap-arg-channel = Задаваемый канал, например stable-4.16; без него (и без --clear) показываются текущий канал и каналы релиза
clap-arg-upgrade-channel--clear = Сбросить канал (кластер тогда не запрашивает рекомендации обновлений)
clap-arg-allow-explicit-channel = Задать канал, которого нет среди каналов релиза, или сбросить канал, который среди них есть
clap-arg-upgrade-channel--read-only = Пробный запуск: напечатать вердикт каждого предусловия и патч, ничего не записывать
clap-about-upgrade-recommend = Обновления на выбор с проблемами, которые касаются этого кластера
clap-arg-version = Показать только этот релиз и завершиться ошибкой при проблемах, не принятых через --accept
clap-arg-show-outdated-releases = Перечислить все релизы каждой минорной версии, а не только два самых новых
clap-arg-accept = Имена принимаемых проблем (например, Failing,ConditionalUpdateRisk,AlertNoTestData)
clap-arg-quiet = С --version: ничего не печатать, только завершиться ошибкой при непринятых проблемах
clap-arg-upgrade-recommend--alerts = Сработавшие оповещения: JSON-ответ Prometheus `/api/v1/alerts` (по умолчанию с --from: файл с именем файла ClusterVersion, где `-cv.yaml` заменено на `-alerts.json`)
clap-about-upgrade-accept = Принять риски условных обновлений (RISK добавляет, RISK- убирает)
clap-arg-risks = Имена рисков через запятую; имя, оканчивающееся на `-`, отменяет принятие этого риска
clap-arg-replace = Заменить принятые риски названными, а не добавлять их к ним
clap-arg-upgrade-accept--clear = Убрать все принятые риски
clap-arg-upgrade-accept--read-only = Проверить и показать запрос (предусловия и патч), ничего не записывать
clap-about-operator = Оператор без интерфейса: `cvo operator start` работает в кластере вместо оператора версии кластера upstream (или рядом с ним с --watch-only), с метриками и эндпоинтами здоровья
clap-about-operator-start = Запустить оператор: приводить кластер к его релизу, отдавать метрики и здоровье
clap-arg-operator-start--release-image = Образ релиза, с которым работает этот оператор (обязательный флаг у upstream); без --payload его полезная нагрузка загружается из реестра
clap-arg-operator-start--payload = Каталог полезной нагрузки релиза (`manifests/` + `release-manifests/`) вместо загрузки --release-image (upstream читает `/` собственного образа)
clap-arg-listen = Адрес эндпоинта метрик и здоровья
clap-arg-serving-cert-file = PEM-сертификат (цепочка) для HTTPS на --listen
clap-arg-serving-key-file = Закрытый PEM-ключ для HTTPS на --listen
clap-arg-insecure-http = Обслуживать --listen по простому HTTP, без сертификатов (только локальные запуски и тесты)
clap-arg-metrics-auth = Кто может читать /metrics: `kube` — вызывающие, которых API-сервер аутентифицирует (клиентский сертификат клиентского ЦС кластера или bearer-токен через TokenReview) и авторизует на get для /metrics (SubjectAccessReview); `none` — кто угодно (только локальные запуски и тесты)
clap-arg-operator-start--name = Имя ClusterVersion и Lease (`CVO_NAME` у upstream)
clap-arg-node-name = Узел, на котором работает этот под (`--node-name`/`NODE_NAME` у upstream), записывается в журнал при запуске
clap-arg-watch-only = Никогда не записывать и не брать Lease: сообщать, что изменилось бы (дрейф), в метриках и журнале, рядом с оператором, который применяет
clap-arg-log-format = Формат журнала в stderr и в --log-dir
clap-arg-log-dir = Также писать журнал в ежедневно ротируемые файлы в этом каталоге (хранится 7)
clap-arg-lease-duration = Длительность Lease в секундах (по умолчанию как у upstream: 137 или 270 для управляющего слоя из одной реплики); срок продления и период повтора сохраняют пропорции upstream
clap-arg-resync-interval = Секунды между проходами сверки (по умолчанию как у upstream: случайно в [120, 240))
clap-about-completion = Напечатать скрипт автодополнения для SHELL (например, `source <(cvo completion bash)`)
clap-arg-shell = Оболочка
clap-about-man = Напечатать страницу man (раздел 1) или записать по странице на команду в каталог
clap-arg-man--dir = Записать `cvo.1`, `cvo-get.1`, `cvo-upgrade-channel.1`, ... в этот каталог
## Texts after a command's help (after_help)
clap-after-fleet =
    Без -o в терминале: живой вид парка кластеров (Enter открывает панель кластера, Esc или q
    возвращает). С -o или когда stdout не терминал: таблица, как только ответит каждый кластер
    или пройдёт --timeout. Код 0, что бы ни ответили кластеры; 1, если kubeconfig не читается;
    2 при неверных флагах (неизвестное имя в --contexts, неверный --contexts-regex).
clap-after-sim-serve =
    Флаги сбоев заменяют поля `faults:` файла сценария по одному. Примеры:
      --latency-ms 50 --jitter-ms 20        каждый запрос ждёт 50-70 мс
      --error list=429:0.1                  10% запросов list получают 429 (Retry-After: 1)
      --error '*=500:0.05'                  5% всех запросов получают 500
      --error get=504:0.02                  2% запросов get висят --timeout-ms, затем 504
      --watch-drop-after-events 5           каждое наблюдение закрывается после 5 событий
      --watch-drop-after-secs 10            ... или через 10 с
      --gone-next 2 --gone-rate 0.1         410 Expired для следующих 2 наблюдений, затем 10%
      --conflict-next 3                     409 Conflict для следующих 3 обновлений/патчей
clap-after-payload-verify = Коды выхода: 0 подпись проверена, 1 не проверена (причины называют каждое опробованное хранилище и ключ) или другой сбой, 2 ошибка использования.
clap-after-reconcile =
    Коды выхода:
      0    готово: проход завершился без сбоя, или релиз Completed
      1    сбой: проход не удался или ClusterVersion в состоянии Failing; или ошибка до запуска
      2    использование: неверные флаги или их значения
      3    тайм-аут: --timeout истёк раньше (stderr говорит, чего ждали)
      4    API-сервер недоступен (при запуске или 30 с во время работы)
      5    полезную нагрузку релиза нельзя получить, загрузить, проверить или принять
      6    Lease оператора версии кластера держит другой cvo (stderr говорит кто и до какого времени)
      130  остановлен SIGINT, 143 — SIGTERM: Lease освобождается, итог печатается

    Пока он ждёт, строки `cvo: waiting for ...` в stderr говорят, чего именно.
clap-after-upgrade-accept =
    Примеры:
      # Принять RiskA и RiskB и перестать принимать RiskC, если он принят
      cvo upgrade accept RiskA,RiskB,RiskC-

      # Принять RiskA и RiskB и больше ничего
      cvo upgrade accept --replace RiskA,RiskB

      # Не принимать никаких рисков
      cvo upgrade accept --clear
